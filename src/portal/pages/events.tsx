import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { api, type Problem, type Session, type StoreEvent } from "../api.js";
import { feedTypes } from "../catalog.js";
import { Json, Page, ProblemView, problemFrom, Time, useLoad } from "../components.js";

/** Events a catch-up reads per page of the feed. */
const CATCH_UP_PAGE = 100;
/**
 * The live tail reconnects after RECONNECT_MIN_MS, doubling at each failure up to RECONNECT_MAX_MS; each wait is drawn
 * between half and all of that, so that tails dropped together (a restart) do not all come back at once.
 */
const RECONNECT_MIN_MS = 1000;
const RECONNECT_MAX_MS = 30_000;
/** Events kept on screen; older ones leave the list (the feed keeps them). */
const MAX_SHOWN = 500;

function reconnectDelay(failures: number): number {
  const ceiling = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** failures);
  return ceiling / 2 + (Math.random() * ceiling) / 2;
}

/**
 * Failures that pass: the connection (status 0), a rate or stream limit (429), the service (5xx). Any other would
 * answer the same again: the tail stops and says why (a refused token has ended the session already: see api.ts).
 */
const passes = (problem: Problem) => problem.status === 0 || problem.status === 429 || problem.status >= 500;

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** "Events": the store's event feed, oldest first, with type filters, "Load more" and a live tail. */
export function Events({ session }: { session: Session }) {
  const catalog = useLoad(() => feedTypes(session.scopes), [session.scopes]);
  const [types, setTypes] = useState<string[]>([]);
  const [events, setEvents] = useState<StoreEvent[]>([]);
  const [dropped, setDropped] = useState(0);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [hasMore, setHasMore] = useState(false);
  const [tail, setTail] = useState(false);
  const [tailStatus, setTailStatus] = useState("");
  const [loading, setLoading] = useState(true);
  /** The sequence read up to, from the feed (its nextCursor) or the stream: every event shown is at or before it. */
  const after = useRef<string | undefined>(undefined);
  /** The tail of the chain of feed reads: each runs after the last, from where it left `after`. */
  const reads = useRef<Promise<unknown>>(Promise.resolve());

  const inTurn = useCallback(<T,>(read: () => Promise<T>): Promise<T> => {
    const next = reads.current.then(read);
    reads.current = next.catch(() => undefined);
    return next;
  }, []);

  /** Shows the events of `more` past `after`, so none shows twice whichever way it came, and moves `after` to `to`. */
  const advance = useCallback((more: StoreEvent[], to: string) => {
    const past = Number(after.current ?? 0);
    const fresh = more.filter((e) => e.sequence > past);
    after.current = to;
    if (fresh.length === 0) return;
    setEvents((shown) => {
      const all = [...shown, ...fresh];
      const over = Math.max(0, all.length - MAX_SHOWN);
      if (over > 0) setDropped((d) => d + over);
      return all.slice(over);
    });
  }, []);

  /** Reads the feed's next page after `after` (only in turn); answers whether it has more right now. */
  const readPage = useCallback(
    async (limit: number) => {
      try {
        const page = await api.events(types, after.current, limit);
        advance(page.data, page.cursor);
        setHasMore(page.hasMore);
        setProblem(null);
        return page.hasMore;
      } finally {
        setLoading(false);
      }
    },
    [types, advance],
  );

  // A new filter reads the feed from its start again.
  useEffect(() => {
    inTurn(async () => {
      after.current = undefined;
      setEvents([]);
      setDropped(0);
      setLoading(true);
      await readPage(20);
    }).catch((e: unknown) => setProblem(problemFrom(e)));
  }, [inTurn, readPage]);

  // The live tail: on every (re)connect, catch up from the feed, then follow the stream from the last sequence read.
  // While the stream is open, the feed is not read at all.
  useEffect(() => {
    if (!tail) return;
    const control = new AbortController();
    const { signal } = control;
    let failures = 0;
    const follower = {
      connected: () => {
        failures = 0;
        setTailStatus("Live: new events appear as they commit.");
      },
      event: (e: StoreEvent) => advance([e], String(e.sequence)),
    };
    const run = async () => {
      while (!signal.aborted) {
        setTailStatus("Connecting to the live stream…");
        let why: Problem;
        try {
          await inTurn(async () => {
            while (!signal.aborted && (await readPage(CATCH_UP_PAGE)));
          });
          if (signal.aborted) return;
          await api.followEvents(types, after.current, follower, signal);
          why = { title: "The live stream ended", detail: "", status: 0 };
        } catch (e) {
          why = problemFrom(e);
        }
        if (signal.aborted) return;
        if (!passes(why)) {
          setProblem(why);
          setTailStatus("Live tail stopped.");
          setTail(false);
          return;
        }
        const wait = reconnectDelay(failures++);
        setTailStatus(`${why.title}. Reconnecting in ${Math.ceil(wait / 1000)} s…`);
        await pause(wait, signal);
      }
    };
    void run();
    return () => control.abort();
  }, [tail, types, inTurn, readPage, advance]);

  const toggleType = (type: string, on: boolean) => setTypes((t) => (on ? [...t, type] : t.filter((x) => x !== type)));
  const toggleTail = () => {
    setTail((t) => !t);
    setTailStatus("");
  };

  return (
    <Page title="Events">
      <fieldset class="types">
        <legend>Event types (none checked: every type the token may read)</legend>
        {catalog.problem && <ProblemView problem={catalog.problem} />}
        {(catalog.data ?? []).map((type) => (
          <label key={type} class="check">
            <input type="checkbox" checked={types.includes(type)} onChange={(e) => toggleType(type, e.currentTarget.checked)} />
            {type}
          </label>
        ))}
      </fieldset>
      <div class="row">
        <button type="button" aria-pressed={tail} onClick={toggleTail}>
          Live tail
        </button>
        <span role="status">{tailStatus}</span>
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
        <button type="button" onClick={() => inTurn(() => readPage(20)).catch((e: unknown) => setProblem(problemFrom(e)))}>
          Load more
        </button>
      )}
    </Page>
  );
}
