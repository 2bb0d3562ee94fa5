import { api, lastApiVersion, openApiDocument, type Session } from "../api.js";
import { Badge, Page, ProblemView, Time, useLoad } from "../components.js";

/** "Overview": which store and environment the token is for, its scopes and expiry, and the API version. */
export function Overview({ session }: { session: Session }) {
  const canReadStore = session.scopes.includes("merchant:read");
  const store = useLoad(() => (canReadStore ? api.store() : Promise.resolve(null)), [session.token]);
  const doc = useLoad(() => openApiDocument(), []);
  const version = lastApiVersion() ?? doc.data?.info.version ?? "…";
  return (
    <Page title="Overview">
      {store.problem && <ProblemView problem={store.problem} />}
      <dl class="facts">
        <dt>Store</dt>
        <dd>
          {store.data ? `${store.data.name} ` : ""}
          <code>{session.tenantId}</code>
          {!canReadStore && <span class="muted"> (the token lacks merchant:read, which the store's name needs)</span>}
        </dd>
        <dt>Environment</dt>
        <dd>
          <Badge value={session.environment} />
        </dd>
        <dt>Scopes</dt>
        <dd>
          <ul class="inline">
            {session.scopes.map((s) => (
              <li key={s}>
                <code>{s}</code>
              </li>
            ))}
          </ul>
        </dd>
        <dt>Token expires</dt>
        <dd>
          <Time iso={new Date(session.expiresAt).toISOString()} />
        </dd>
        <dt>API version</dt>
        <dd>
          <code>{version}</code>
        </dd>
      </dl>
      <p class="muted">
        Every page here calls the public API with this token, under its scopes and rate limits: anything it does can be done with curl (see{" "}
        <a href="/docs">the API reference</a>).
      </p>
    </Page>
  );
}
