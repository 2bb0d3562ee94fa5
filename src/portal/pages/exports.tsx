import { useState } from "preact/hooks";
import { api, type Export, type Session } from "../api.js";
import { Badge, Loading, Page, Pager, ProblemView, Time, useAction, useCursors, useLoad } from "../components.js";

/** What can be exported, with the scope that reads it. */
const RESOURCES = [
  { resource: "orders", scope: "orders:read" },
  { resource: "customers", scope: "customers:read" },
  { resource: "products", scope: "catalog:read" },
];

function size(bytes: number | null): string {
  if (bytes === null) return "–";
  return bytes < 1024 ? `${bytes} B` : bytes < 1_048_576 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1_048_576).toFixed(1)} MiB`;
}

function RequestExport({ session, requested }: { session: Session; requested: () => void }) {
  const allowed = RESOURCES.filter((r) => session.scopes.includes(r.scope));
  const [resource, setResource] = useState(allowed[0]?.resource ?? "");
  const action = useAction<Export>();
  if (allowed.length === 0) return <p>The token reads none of orders, customers or products: it cannot export.</p>;
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(() => api.createExport(resource)).then((done) => done && requested());
  };
  return (
    <section aria-labelledby="request-export">
      <h2 id="request-export">Export in bulk</h2>
      <p>One gzip-compressed JSON Lines file, read from one snapshot; its sequence is where to continue reading the event feed.</p>
      {action.problem && <ProblemView problem={action.problem} />}
      {action.result && <p role="status">Export {action.result.id} queued.</p>}
      <form onSubmit={submit} class="stack">
        <label>
          Resource
          <select value={resource} onChange={(e) => setResource(e.currentTarget.value)}>
            {allowed.map((r) => (
              <option key={r.resource} value={r.resource}>
                {r.resource}
              </option>
            ))}
          </select>
        </label>
        <div>
          <button type="submit" disabled={action.busy}>
            Export
          </button>
        </div>
      </form>
    </section>
  );
}

/** "Exports": the Application's bulk exports with their files, and a form to request one. */
export function Exports({ session }: { session: Session }) {
  const cursors = useCursors([]);
  const list = useLoad(() => api.exports(cursors.cursor), [cursors.cursor]);
  return (
    <Page title="Exports">
      <section aria-labelledby="exports">
        <h2 id="exports">Exports</h2>
        {list.problem && <ProblemView problem={list.problem} />}
        {list.loading && !list.data && <Loading what="exports" />}
        {list.data && list.data.data.length === 0 && <p>No export yet: request one below.</p>}
        {list.data && list.data.data.length > 0 && (
          <table>
            <thead>
              <tr>
                <th scope="col">Resource</th>
                <th scope="col">Status</th>
                <th scope="col">Objects</th>
                <th scope="col">Size</th>
                <th scope="col">Sequence</th>
                <th scope="col">Requested</th>
                <th scope="col">File</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((x: Export) => (
                <tr key={x.id}>
                  <td>{x.resource}</td>
                  <td>
                    <Badge value={x.status} />
                    {x.error && <span> {x.error}</span>}
                  </td>
                  <td>{x.objectCount ?? "–"}</td>
                  <td>{size(x.bytes)}</td>
                  <td>{x.sequence ?? "–"}</td>
                  <td>
                    <Time iso={x.createdAt} />
                  </td>
                  <td>
                    {x.url ? (
                      <a href={x.url} download>
                        Download (link valid until <Time iso={x.expiresAt} />)
                      </a>
                    ) : (
                      "–"
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <div>
          <button type="button" onClick={list.reload}>
            Refresh
          </button>
        </div>
        <Pager
          hasPrevious={cursors.hasPrevious}
          hasNext={Boolean(list.data?.nextCursor)}
          onPrevious={cursors.previous}
          onNext={() => list.data?.nextCursor && cursors.next(list.data.nextCursor)}
        />
      </section>
      <RequestExport session={session} requested={list.reload} />
    </Page>
  );
}
