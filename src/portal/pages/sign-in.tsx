import { useEffect, useState } from "preact/hooks";
import { sessionEndReason, signInWithCredentials, signInWithLink } from "../api.js";
import { Page, ProblemView, useAction } from "../components.js";
import { href, navigate } from "../router.js";

/**
 * "Sign in": the Application's client_id and client_secret, exchanged at the token endpoint; or a portal link's
 * secret (`link`), exchanged once: `linkTaken` tells the page it is spent, so no later sign-in tries it again.
 */
export function SignIn({ link, linkTaken }: { link: string | null; linkTaken: () => void }) {
  const [clientId, setClientId] = useState("");
  const [clientSecret, setClientSecret] = useState("");
  const [tenantId, setTenantId] = useState("");
  const action = useAction<unknown>();
  const ended = sessionEndReason();

  useEffect(() => {
    if (!link) return;
    linkTaken();
    void action.run(() => signInWithLink(link)).then((s) => s && navigate(href("overview")));
  }, [link, linkTaken, action.run]);

  const submit = (e: Event) => {
    e.preventDefault();
    // The secret is not kept: only the token the exchange answers is.
    void action
      .run(() => signInWithCredentials(clientId.trim(), clientSecret, tenantId.trim()))
      .then((s) => {
        if (!s) return;
        setClientSecret("");
        navigate(href("overview"));
      });
  };

  return (
    <Page title="Sign in">
      <p>Sign in with your Application's credentials, or open the one-time portal link the platform team sent you.</p>
      {action.busy && <p role="status">Signing in…</p>}
      {ended && !action.problem && <ProblemView problem={ended} />}
      {action.problem && <ProblemView problem={action.problem} />}
      <form onSubmit={submit} class="stack">
        <label>
          Client ID
          <input name="client_id" autocomplete="username" required value={clientId} onInput={(e) => setClientId(e.currentTarget.value)} />
        </label>
        <label>
          Client secret
          <input
            name="client_secret"
            type="password"
            autocomplete="current-password"
            required
            value={clientSecret}
            onInput={(e) => setClientSecret(e.currentTarget.value)}
          />
        </label>
        <label>
          Store code (tenant_id), when the Application is granted on several stores
          <input name="tenant_id" value={tenantId} onInput={(e) => setTenantId(e.currentTarget.value)} />
        </label>
        <div>
          <button type="submit" disabled={action.busy}>
            Sign in
          </button>
        </div>
      </form>
    </Page>
  );
}
