import { useState } from "preact/hooks";
import { api, type CreatedEndpoint, type Endpoint, type EndpointStats } from "../api.js";
import { subscribableTypes } from "../catalog.js";
import { Badge, Loading, Page, Pager, ProblemView, ShownOnce, Time, useAction, useCursors, useLoad } from "../components.js";
import { href } from "../router.js";

export function successRate(stats: EndpointStats | undefined): string {
  if (!stats || stats.successRate === null) return "–";
  return `${(stats.successRate * 100).toFixed(1)}% of ${stats.delivered + stats.failed}`;
}

/** Checkboxes of the subscribable event types, as a group with its own name. */
export function EventTypePicker({ selected, onChange, legend }: { selected: string[]; onChange: (types: string[]) => void; legend: string }) {
  const types = useLoad(() => subscribableTypes(), []);
  const toggle = (type: string, on: boolean) => onChange(on ? [...selected, type] : selected.filter((t) => t !== type));
  return (
    <fieldset class="types">
      <legend>{legend}</legend>
      {types.problem && <ProblemView problem={types.problem} />}
      {(types.data ?? []).map((type) => (
        <label key={type} class="check">
          <input type="checkbox" checked={selected.includes(type)} onChange={(e) => toggle(type, e.currentTarget.checked)} />
          {type}
        </label>
      ))}
    </fieldset>
  );
}

function CreateEndpoint({ created }: { created: () => void }) {
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<string[]>([]);
  const action = useAction<CreatedEndpoint>();
  const submit = (e: Event) => {
    e.preventDefault();
    void action
      .run(() => api.createEndpoint(url.trim(), events))
      .then((done) => {
        if (!done) return;
        setUrl("");
        setEvents([]);
        created();
      });
  };
  return (
    <section aria-labelledby="create-endpoint">
      <h2 id="create-endpoint">Create an endpoint</h2>
      {action.problem && <ProblemView problem={action.problem} />}
      {action.result && (
        <>
          <p role="status">
            Endpoint created: <a href={href("webhooks", action.result.id)}>{action.result.url}</a>
          </p>
          <ShownOnce title="Signing secret of the new endpoint" secret={action.result.secret} />
        </>
      )}
      <form onSubmit={submit} class="stack">
        <label>
          Endpoint URL
          <input type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} placeholder="https://example.com/webhooks" />
        </label>
        <EventTypePicker legend="Event types" selected={events} onChange={setEvents} />
        <div>
          <button type="submit" disabled={action.busy}>
            Create endpoint
          </button>
        </div>
      </form>
    </section>
  );
}

/** "Webhooks": the endpoints with their health, and a form to create one. */
export function Webhooks() {
  const cursors = useCursors([]);
  const list = useLoad(() => api.endpoints(cursors.cursor), [cursors.cursor]);
  return (
    <Page title="Webhooks">
      <section aria-labelledby="endpoints">
        <h2 id="endpoints">Endpoints</h2>
        {list.problem && <ProblemView problem={list.problem} />}
        {list.loading && !list.data && <Loading what="endpoints" />}
        {list.data && list.data.data.length === 0 && <p>No endpoint yet: create one below.</p>}
        {list.data && list.data.data.length > 0 && (
          <table>
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Status</th>
                <th scope="col">Last success</th>
                <th scope="col">Failures</th>
                <th scope="col">Success rate (24 h)</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((e: Endpoint) => (
                <tr key={e.id}>
                  <td>
                    <a href={href("webhooks", e.id)}>{e.url}</a>
                  </td>
                  <td>
                    <Badge value={e.status} />
                  </td>
                  <td>
                    <Time iso={e.lastSuccessAt} none="never" />
                  </td>
                  <td>{e.failureCount}</td>
                  <td>{successRate(e.deliveriesLast24h)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <Pager
          hasPrevious={cursors.hasPrevious}
          hasNext={Boolean(list.data?.nextCursor)}
          onPrevious={cursors.previous}
          onNext={() => list.data?.nextCursor && cursors.next(list.data.nextCursor)}
        />
      </section>
      <CreateEndpoint created={list.reload} />
    </Page>
  );
}
