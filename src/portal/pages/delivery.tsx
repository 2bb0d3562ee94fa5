import { useEffect, useRef, useState } from "preact/hooks";
import { api, type Attempt, type Delivery as DeliveryRow, type Problem } from "../api.js";
import { Badge, Json, Loading, Page, ProblemView, problemFrom, TextBlock, Time, useAction, useLoad } from "../components.js";
import { href } from "../router.js";

/** After "Replay", the attempts are read this often until the new one is there, at most this many times. */
const REPLAY_POLL_MS = 1000;
const REPLAY_POLL_TRIES = 30;

function AttemptView({ attempt }: { attempt: Attempt }) {
  const id = `attempt-${attempt.attempt}`;
  return (
    <section class="attempt" aria-labelledby={id}>
      <h3 id={id}>
        Attempt {attempt.attempt} ({attempt.trigger})
      </h3>
      <dl class="facts">
        <dt>Started</dt>
        <dd>
          <Time iso={attempt.startedAt} />
        </dd>
        <dt>Duration</dt>
        <dd>{attempt.durationMs} ms</dd>
        <dt>Response status</dt>
        <dd>{attempt.httpStatus ?? "no response"}</dd>
        <dt>Error</dt>
        <dd>{attempt.error ?? "none"}</dd>
      </dl>
      <table>
        <caption>Request headers</caption>
        <thead>
          <tr>
            <th scope="col">Header</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(attempt.requestHeaders).map(([name, value]) => (
            <tr key={name}>
              <td>
                <code>{name}</code>
              </td>
              <td class="wrap">
                <code>{String(value)}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="label">Response body (first 4 KiB)</p>
      {attempt.responseBody ? <TextBlock text={attempt.responseBody} label={`Response body of attempt ${attempt.attempt}`} /> : <p class="muted">empty</p>}
    </section>
  );
}

/**
 * One delivery, to debug it in one screen: the payload as sent, every attempt with its request headers, response
 * status, body excerpt, duration and error, the next scheduled attempt, and "Replay", which shows the new attempt
 * once it lands.
 */
export function Delivery({ id }: { id: string }) {
  const loaded = useLoad(() => Promise.all([api.delivery(id), api.attempts(id)]), [id]);
  const [shown, setShown] = useState<{ delivery: DeliveryRow; attempts: Attempt[] } | null>(null);
  useEffect(() => {
    if (loaded.data) setShown({ delivery: loaded.data[0], attempts: loaded.data[1] });
  }, [loaded.data]);
  const replay = useAction<DeliveryRow>();
  const [waiting, setWaiting] = useState<string | null>(null);
  const [pollProblem, setPollProblem] = useState<Problem | null>(null);
  const alive = useRef(true);
  useEffect(
    () => () => {
      alive.current = false;
    },
    [],
  );

  if (!shown) return <Page title="Delivery">{loaded.problem ? <ProblemView problem={loaded.problem} /> : <Loading what="the delivery" />}</Page>;
  const { delivery, attempts } = shown;

  const doReplay = async () => {
    const before = attempts.length;
    setPollProblem(null);
    if (!(await replay.run(() => api.replay(delivery.id)))) return;
    setWaiting("Replay queued: waiting for its attempt…");
    for (let i = 0; i < REPLAY_POLL_TRIES && alive.current; i++) {
      await new Promise((r) => setTimeout(r, REPLAY_POLL_MS));
      try {
        const now = await api.attempts(delivery.id);
        if (now.length > before) {
          const latest = now[now.length - 1];
          setShown({ delivery: await api.delivery(delivery.id), attempts: now });
          setWaiting(
            `Replay attempt ${latest.attempt}: ${latest.httpStatus !== null ? `HTTP ${latest.httpStatus}` : "no response"}${latest.error ? ` (${latest.error})` : ""}.`,
          );
          return;
        }
      } catch (e) {
        setWaiting(null);
        setPollProblem(problemFrom(e));
        return;
      }
    }
    setWaiting("The replay's attempt has not landed yet: refresh the page later.");
  };

  return (
    <Page title="Delivery">
      <p>
        <a href={href("deliveries")}>All deliveries</a> · <a href={href("webhooks", delivery.endpointId)}>Its endpoint</a>
      </p>
      <dl class="facts">
        <dt>Event type</dt>
        <dd>{delivery.eventType}</dd>
        <dt>Event ID</dt>
        <dd>
          <code>{delivery.eventId}</code>
        </dd>
        <dt>Status</dt>
        <dd>
          <Badge value={delivery.status} />
        </dd>
        <dt>Attempts</dt>
        <dd>{delivery.attempts}</dd>
        <dt>Last error</dt>
        <dd>{delivery.lastError ?? "none"}</dd>
        <dt>Next scheduled attempt</dt>
        <dd>
          <Time iso={delivery.nextAttemptAt} none="none scheduled" />
        </dd>
      </dl>
      <div class="row">
        <button type="button" onClick={() => void doReplay()} disabled={replay.busy || waiting?.startsWith("Replay queued") === true}>
          Replay
        </button>
      </div>
      {replay.problem && <ProblemView problem={replay.problem} />}
      {pollProblem && <ProblemView problem={pollProblem} />}
      <p role="status">{waiting ?? ""}</p>
      <h2>Payload as sent</h2>
      {delivery.payload === null || delivery.payload === undefined ? (
        <p class="muted">The event is past its retention; its payload is no longer kept.</p>
      ) : (
        <Json value={delivery.payload} label="Payload as sent" />
      )}
      <h2>Attempts</h2>
      {attempts.length === 0 && <p>No attempt has ended yet.</p>}
      {attempts.map((a) => (
        <AttemptView key={a.attempt} attempt={a} />
      ))}
    </Page>
  );
}
