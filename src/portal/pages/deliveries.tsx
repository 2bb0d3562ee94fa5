import { api, DELIVERY_STATUSES } from "../api.js";
import { eventCatalog } from "../catalog.js";
import { Badge, Loading, Page, Pager, ProblemView, Time, useCursors, useLoad } from "../components.js";
import { href, navigate, type Route } from "../router.js";

const FILTERS = ["status", "eventType", "endpointId"] as const;
type Filter = Record<(typeof FILTERS)[number], string | undefined>;

/**
 * "Deliveries": newest first, filtered by status, event type and endpoint (kept in the address), a page at a time;
 * each row names its endpoint by URL, so deliveries of one event to two endpoints tell apart.
 */
export function Deliveries({ route }: { route: Route }) {
  const filter: Filter = {
    status: route.params.get("status") ?? undefined,
    eventType: route.params.get("eventType") ?? undefined,
    endpointId: route.params.get("endpointId") ?? undefined,
  };
  const key = JSON.stringify(filter);
  const cursors = useCursors([key]);
  const list = useLoad(() => api.deliveries(filter, cursors.cursor), [key, cursors.cursor]);
  const types = useLoad(() => eventCatalog(), []);
  // One page holds them all: an Application has at most 20 endpoints on a store, a page's size.
  const endpoints = useLoad(() => api.endpoints(), []);
  const urlOf = new Map((endpoints.data?.data ?? []).map((e) => [e.id, e.url]));
  const set = (name: keyof Filter, value: string) => navigate(href("deliveries", null, { ...filter, [name]: value || undefined }));

  return (
    <Page title="Deliveries">
      <form class="row" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Status
          <select value={filter.status ?? ""} onChange={(e) => set("status", e.currentTarget.value)}>
            <option value="">Any</option>
            {DELIVERY_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Event type
          <select value={filter.eventType ?? ""} onChange={(e) => set("eventType", e.currentTarget.value)}>
            <option value="">Any</option>
            {(types.data ?? []).map((t) => (
              <option key={t.type} value={t.type}>
                {t.type}
              </option>
            ))}
          </select>
        </label>
        <label>
          Endpoint
          <select value={filter.endpointId ?? ""} onChange={(e) => set("endpointId", e.currentTarget.value)}>
            <option value="">Any</option>
            {(endpoints.data?.data ?? []).map((e) => (
              <option key={e.id} value={e.id}>
                {e.url}
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </form>
      {list.problem && <ProblemView problem={list.problem} />}
      {list.loading && !list.data && <Loading what="deliveries" />}
      {list.data && list.data.data.length === 0 && <p>No delivery matches.</p>}
      {list.data && list.data.data.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Event type</th>
              <th scope="col">Endpoint</th>
              <th scope="col">Status</th>
              <th scope="col">HTTP status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last attempt</th>
              <th scope="col">Next attempt</th>
              <th scope="col">Delivery</th>
            </tr>
          </thead>
          <tbody>
            {list.data.data.map((d) => (
              <tr key={d.id}>
                <td>{d.eventType}</td>
                <td class="wrap">
                  <a href={href("webhooks", d.endpointId)}>{urlOf.get(d.endpointId) ?? d.endpointId}</a>
                </td>
                <td>
                  <Badge value={d.status} />
                </td>
                <td>{d.httpStatus ?? "–"}</td>
                <td>{d.attempts}</td>
                <td>
                  <Time iso={d.lastAttemptAt} />
                </td>
                <td>
                  <Time iso={d.nextAttemptAt} none="none scheduled" />
                </td>
                <td>
                  <a href={href("deliveries", d.id)} aria-label={`Open delivery of ${d.eventType}, ${d.status}, ${d.id}`}>
                    Open
                  </a>
                </td>
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
    </Page>
  );
}
