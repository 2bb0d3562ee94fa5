import { eventCatalog } from "../catalog.js";
import { Json, Loading, Page, ProblemView, useLoad } from "../components.js";

/** "Event types": every type the service sends, with its scope, schema and an example, from the OpenAPI document. */
export function EventTypes() {
  const catalog = useLoad(() => eventCatalog(), []);
  return (
    <Page title="Event types">
      <p class="muted">
        From the published OpenAPI document (<code>/public/v1/openapi.json</code>, its <code>webhooks</code>). Subscribing to a type, and reading it in the
        feed, needs its scope.
      </p>
      {catalog.problem && <ProblemView problem={catalog.problem} />}
      {!catalog.data && !catalog.problem && <Loading what="the event catalog" />}
      {(catalog.data ?? []).map((t) => (
        <section key={t.type} class="event-type" aria-labelledby={`type-${t.type}`}>
          <h2 id={`type-${t.type}`}>{t.type}</h2>
          <p>
            Scope: <code>{t.scope || "none"}</code>
          </p>
          <p>{t.description}</p>
          <details>
            <summary>Schema of {t.type}</summary>
            <Json value={t.schema} label={`Schema of ${t.type}`} />
          </details>
          <details>
            <summary>Example payload of {t.type}</summary>
            <Json value={t.example} label={`Example payload of ${t.type}`} />
          </details>
        </section>
      ))}
    </Page>
  );
}
