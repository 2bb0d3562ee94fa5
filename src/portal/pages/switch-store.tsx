import { useState } from "preact/hooks";
import { type Session, signOut } from "../api.js";
import { Badge, Page } from "../components.js";

/**
 * A portal link opened while signed in. The link signs in to the store it was made for, which another page or person
 * may have chosen, so it never replaces the session unasked: the user keeps this session (`keep`) or signs out of it
 * (the token is revoked), after which the sign-in page takes the link.
 */
export function SwitchStore({ session, keep }: { session: Session; keep: () => void }) {
  const [leaving, setLeaving] = useState(false);
  const store = <code>{session.tenantId}</code>;
  const leave = () => {
    setLeaving(true);
    void signOut();
  };
  return (
    <Page title="Switch to another store?">
      <p>
        You are signed in to the store {store} <Badge value={session.environment} />. The portal link you opened signs in to the store it was made for: opening
        it would switch this tab to that store and sign you out of {store}.
      </p>
      <p>Open it only if you expected a link to another store. The link stays unused if you keep this session.</p>
      <div class="row">
        <button type="button" onClick={keep} disabled={leaving}>
          Stay signed in to {session.tenantId}
        </button>
        <button type="button" onClick={leave} disabled={leaving}>
          Sign out and open the link
        </button>
      </div>
    </Page>
  );
}
