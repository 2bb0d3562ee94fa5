import { useEffect, useState } from "preact/hooks";
import { api, type Delivery, type Endpoint as EndpointRow, type RotatedSecret } from "../api.js";
import { Badge, Loading, Page, ProblemView, ShownOnce, Time, useAction, useLoad } from "../components.js";
import { href } from "../router.js";
import { EventTypePicker, successRate } from "./webhooks.js";

/**
 * An ISO instant from a datetime-local value read as UTC, the one zone the portal shows times in (the control itself
 * carries no zone; the browser's own would differ from every time shown).
 */
const instant = (utc: string): string | undefined => (utc ? new Date(`${utc}Z`).toISOString() : undefined);

function Edit({ endpoint, saved }: { endpoint: EndpointRow; saved: (e: EndpointRow) => void }) {
  const [url, setUrl] = useState(endpoint.url);
  const [events, setEvents] = useState(endpoint.events);
  useEffect(() => {
    setUrl(endpoint.url);
    setEvents(endpoint.events);
  }, [endpoint]);
  const action = useAction<EndpointRow>();
  const submit = (e: Event) => {
    e.preventDefault();
    // A broker endpoint's URL holds credentials the portal never sees: only an http endpoint's URL is edited here.
    const change = endpoint.type === "http" ? { url: url.trim(), events } : { events };
    void action.run(() => api.updateEndpoint(endpoint.id, change)).then((done) => done && saved(done));
  };
  return (
    <section aria-labelledby="edit-endpoint">
      <h2 id="edit-endpoint">Edit</h2>
      {action.problem && <ProblemView problem={action.problem} />}
      {action.result && <p role="status">Saved.</p>}
      <form onSubmit={submit} class="stack">
        {endpoint.type === "http" && (
          <label>
            Endpoint URL
            <input type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
          </label>
        )}
        <EventTypePicker legend="Event types" selected={events} onChange={setEvents} />
        <div>
          <button type="submit" disabled={action.busy}>
            Save changes
          </button>
        </div>
      </form>
    </section>
  );
}

function Recover({ endpoint }: { endpoint: EndpointRow }) {
  const [since, setSince] = useState("");
  const [until, setUntil] = useState("");
  const action = useAction<{ count: number; hasMore?: boolean }>();
  const submit = (e: Event) => {
    e.preventDefault();
    const from = instant(since);
    if (from) void action.run(() => api.recover(endpoint.id, from, instant(until)));
  };
  return (
    <section aria-labelledby="recover">
      <h2 id="recover">Recover failed deliveries</h2>
      <p class="muted">Sends again every FAILED or DEAD_LETTER delivery of this endpoint created in the window, given in UTC.</p>
      {action.problem && <ProblemView problem={action.problem} />}
      {action.result && (
        <p role="status">
          {action.result.count} deliveries will be sent again{action.result.hasMore ? "; more remain in the window: recover again" : ""}.
        </p>
      )}
      <form onSubmit={submit} class="row">
        <label>
          From (UTC)
          <input type="datetime-local" step={1} required value={since} onInput={(e) => setSince(e.currentTarget.value)} />
        </label>
        <label>
          Until (UTC, default now)
          <input type="datetime-local" step={1} value={until} onInput={(e) => setUntil(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={action.busy}>
          Recover
        </button>
      </form>
    </section>
  );
}

/** One endpoint: its health, "Pause"/"Resume", "Rotate secret", "Send test event", editing and "Recover". */
export function Endpoint({ id }: { id: string }) {
  const loaded = useLoad(() => api.endpoint(id), [id]);
  const [endpoint, setEndpoint] = useState<EndpointRow | null>(null);
  useEffect(() => setEndpoint(loaded.data), [loaded.data]);
  const toggle = useAction<EndpointRow>();
  const rotate = useAction<RotatedSecret>();
  const test = useAction<Delivery>();

  if (!endpoint) {
    return <Page title="Endpoint">{loaded.problem ? <ProblemView problem={loaded.problem} /> : <Loading what="the endpoint" />}</Page>;
  }
  const paused = endpoint.status === "INACTIVE";
  const switchTo = (status: "ACTIVE" | "INACTIVE") =>
    void toggle.run(() => api.updateEndpoint(endpoint.id, { status })).then((done) => done && setEndpoint(done));

  return (
    <Page title="Endpoint">
      <p>
        <a href={href("webhooks")}>All endpoints</a> · <a href={href("deliveries", null, { endpointId: endpoint.id })}>Deliveries of this endpoint</a>
      </p>
      <dl class="facts">
        <dt>Type</dt>
        <dd>{endpoint.type === "http" ? "HTTP" : `Message broker: ${endpoint.type}`}</dd>
        <dt>URL</dt>
        <dd>
          <code>{endpoint.url}</code>
        </dd>
        {endpoint.destination && (
          <>
            <dt>Broker settings</dt>
            <dd>
              <code>{JSON.stringify(endpoint.destination)}</code>
            </dd>
          </>
        )}
        <dt>Order</dt>
        <dd>{endpoint.ordering === "store" ? "One at a time, in sequence order" : "Any order"}</dd>
        <dt>Status</dt>
        <dd>
          <Badge value={endpoint.status} />
          {endpoint.disabledReason && <span> {endpoint.disabledReason}</span>}
        </dd>
        <dt>Event types</dt>
        <dd>{endpoint.events.join(", ")}</dd>
        <dt>Secret prefix</dt>
        <dd>
          <code>{endpoint.secretPrefix}</code>
        </dd>
        <dt>Last success</dt>
        <dd>
          <Time iso={endpoint.lastSuccessAt} none="never" />
        </dd>
        <dt>Failures in a row</dt>
        <dd>{endpoint.failureCount}</dd>
        <dt>Success rate (24 h)</dt>
        <dd>{successRate(endpoint.deliveriesLast24h)}</dd>
      </dl>

      <div class="row">
        {paused ? (
          <button type="button" disabled={toggle.busy} onClick={() => switchTo("ACTIVE")}>
            Resume
          </button>
        ) : (
          <button type="button" disabled={toggle.busy} onClick={() => switchTo("INACTIVE")}>
            Pause
          </button>
        )}
        <button type="button" disabled={rotate.busy} onClick={() => void rotate.run(() => api.rotateSecret(endpoint.id))}>
          Rotate secret
        </button>
        <button type="button" disabled={test.busy} onClick={() => void test.run(() => api.testEndpoint(endpoint.id))}>
          Send test event
        </button>
      </div>
      {toggle.problem && <ProblemView problem={toggle.problem} />}
      {toggle.result && <p role="status">The endpoint is {toggle.result.status}.</p>}
      {rotate.problem && <ProblemView problem={rotate.problem} />}
      {rotate.result && (
        <>
          <ShownOnce title="New signing secret" secret={rotate.result.secret} />
          <p class="muted">
            Until <Time iso={rotate.result.previousSecretExpiresAt} /> deliveries carry a signature for the new and for the previous secret.
          </p>
        </>
      )}
      {test.busy && <p role="status">Sending a test event…</p>}
      {test.problem && <ProblemView problem={test.problem} />}
      {test.result && (
        <p role="status">
          Test event {test.result.status}
          {test.result.httpStatus !== null ? ` (HTTP ${test.result.httpStatus})` : ""}: <a href={href("deliveries", test.result.id)}>view the delivery</a>
        </p>
      )}
      <Edit endpoint={endpoint} saved={setEndpoint} />
      <Recover endpoint={endpoint} />
    </Page>
  );
}
