import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { api, type Problem, type StoreEvent } from "../api.js";
import { eventCatalog } from "../catalog.js";
import { Json, Page, ProblemView, problemFrom, Time, useLoad } from "../components.js";

/**
 * The live tail reads the feed after the last sequence seen every TAIL_INTERVAL_MS, at once again while the feed has
 * more, and not at all while the tab is hidden: 12 requests a minute at most when idle, well inside a SANDBOX
 * store's 100 per minute. After a failure it waits TAIL_BACKOFF_MS.
 */
const TAIL_INTERVAL_MS = 5000;
const TAIL_BACKOFF_MS = 30_000;
const TAIL_PAGE = 100;
/** Events kept on screen; older ones leave the list (the feed keeps them). */
const MAX_SHOWN = 500;

/** "Events": the store's event feed, oldest first, with type filters, "Load more" and a live tail. */
export function Events() {
  const catalog = useLoad(() => eventCatalog(), []);
  const [types, setTypes] = useState<string[]>([]);
  const [events, setEvents] = useState<StoreEvent[]>([]);
  const [dropped, setDropped] = useState(0);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [hasMore, setHasMore] = useState(false);
  const [tail, setTail] = useState(false);
  const [hidden, setHidden] = useState(document.hidden);
  const [loading, setLoading] = useState(true);
  const cursor = useRef<string | undefined>(undefined);
  const busy = useRef(false);

  const append = useCallback((more: StoreEvent[]) => {
    if (more.length === 0) return;
    setEvents((shown) => {
      const all = [...shown, ...more];
      const over = Math.max(0, all.length - MAX_SHOWN);
      if (over > 0) setDropped((d) => d + over);
      return all.slice(over);
    });
  }, []);

  /** Reads the next page after the cursor; answers whether the feed has more right now. */
  const readMore = useCallback(
    async (limit: number) => {
      // A read already running (Load more) answers for this one: the tail waits its interval.
      if (busy.current) return false;
      busy.current = true;
      try {
        const page = await api.events(types, cursor.current, limit);
        cursor.current = page.cursor;
        append(page.data);
        setHasMore(page.hasMore);
        setProblem(null);
        return page.hasMore;
      } finally {
        busy.current = false;
        setLoading(false);
      }
    },
    [types, append],
  );

  // A new filter reads the feed from its start again.
  useEffect(() => {
    cursor.current = undefined;
    setEvents([]);
    setDropped(0);
    setLoading(true);
    readMore(20).catch((e: unknown) => setProblem(problemFrom(e)));
  }, [readMore]);

  useEffect(() => {
    const onVisibility = () => setHidden(document.hidden);
    document.addEventListener("visibilitychange", onVisibility);
    return () => document.removeEventListener("visibilitychange", onVisibility);
  }, []);

  useEffect(() => {
    if (!tail || hidden) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const tick = async () => {
      let wait = TAIL_INTERVAL_MS;
      try {
        if (await readMore(TAIL_PAGE)) wait = 0;
      } catch (e) {
        setProblem(problemFrom(e));
        wait = TAIL_BACKOFF_MS;
      }
      if (!stopped) timer = setTimeout(tick, wait);
    };
    timer = setTimeout(tick, 0);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [tail, hidden, readMore]);

  const toggleType = (type: string, on: boolean) => setTypes((t) => (on ? [...t, type] : t.filter((x) => x !== type)));
  const tailState = !tail ? "" : hidden ? "Live tail paused while this tab is hidden." : `Live tail on: new events appear as they commit.`;

  return (
    <Page title="Events">
      <fieldset class="types">
        <legend>Event types (none checked: every type the token may read)</legend>
        {(catalog.data ?? [])
          .filter((t) => t.type !== "webhook.test")
          .map((t) => (
            <label key={t.type} class="check">
              <input type="checkbox" checked={types.includes(t.type)} onChange={(e) => toggleType(t.type, e.currentTarget.checked)} />
              {t.type}
            </label>
          ))}
      </fieldset>
      <div class="row">
        <button type="button" aria-pressed={tail} onClick={() => setTail((t) => !t)}>
          Live tail
        </button>
        <span role="status">{tailState}</span>
      </div>
      {problem && <ProblemView problem={problem} />}
      {dropped > 0 && <p class="muted">{dropped} older events left this list; the feed keeps them.</p>}
      {loading && events.length === 0 && <p role="status">Loading events…</p>}
      {!loading && events.length === 0 && <p>No events yet.</p>}
      {events.length > 0 && (
        <table aria-label="Event feed">
          <thead>
            <tr>
              <th scope="col">Sequence</th>
              <th scope="col">Event type</th>
              <th scope="col">Time</th>
              <th scope="col">Event</th>
            </tr>
          </thead>
          <tbody>
            {events.map((e) => (
              <tr key={e.eventId}>
                <td>{e.sequence}</td>
                <td>{e.eventType}</td>
                <td>
                  <Time iso={e.timestamp} />
                </td>
                <td>
                  <details>
                    <summary>
                      <code>{e.eventId}</code>
                    </summary>
                    <Json value={e.data} label={`Data of event ${e.sequence}`} />
                  </details>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {hasMore && !tail && (
        <button type="button" onClick={() => readMore(20).catch((e: unknown) => setProblem(problemFrom(e)))}>
          Load more
        </button>
      )}
    </Page>
  );
}
