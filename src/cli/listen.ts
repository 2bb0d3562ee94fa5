import { randomUUID } from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { generateWebhookSecret } from "../modules/webhooks/secret.js";
import { deliveryHeaders } from "../modules/webhooks/message.js";
import { duplicateAfterMs, holdOf, isIdle, MAX_DRILL_SECONDS, type AttemptDrill, type Drill } from "../modules/webhooks/drill.js";
import { API_VERSION_HEADER, API_VERSIONS, isApiVersion, type ApiVersion } from "../platform/versions.js";

/**
 * `partner-listen`: local development without a tunnel. Reads the store's event feed (GET /public/v1/events) with the
 * partner's own credentials and POSTs each event, signed as a webhook delivery is, to a local URL. It runs on the
 * developer's machine, so the forward target may be 127.0.0.1 and needs no private-network exception.
 */

const USAGE = `Usage: partner-listen --base-url <url> --client-id <id> --client-secret <secret> --forward-to <url> [options]

Reads the event feed of the store your credentials are granted on and forwards every event to --forward-to,
signed as a webhook delivery (X-Service-Signature and the Standard Webhooks headers) and with the Api-Version
its body is rendered in.

Options:
  --api-version <v>      read the feed in this API version and forward in it, as an endpoint on that version
                         receives deliveries (default: your Application's pin); one of ${API_VERSIONS.join(", ")}
  --types <a,b,...>      only these event types (default: every type your scopes allow)
  --after <sequence>     start after this sequence, ignoring the state file (0 replays every kept event)
  --state <file>         where the last forwarded sequence is kept, to resume there after a restart
                         (default .listen-state.json; without one, from now on)
  --secret <whsec_...>   sign with this secret (default: a new one, printed at start)
  --interval <ms>        how often to look for new events when caught up (default 1000)
  --drill <spec>         rehearse faults, as a SANDBOX endpoint's drill does: duplicate=<0..1> sends that share of
                         events twice (same eventId and webhook-id, signed again), reorder=<seconds> holds each a
                         random time within that window so later events overtake it, delay=<seconds> holds each up to
                         that much more (0 to ${MAX_DRILL_SECONDS} s); comma-separated, e.g. duplicate=0.5,reorder=10,delay=5
  --once                 forward what is there, then exit (after what a drill holds)
  --help                 this text
`;

interface Envelope {
  eventId: string;
  eventType: string;
  sequence: number;
}

interface FeedPage {
  data: Envelope[];
  pagination: { hasMore: boolean; nextCursor: string };
}

class UsageError extends Error {}

/** The last sequence forwarded, from the state file; null when there is none yet. */
function readState(file: string): string | null {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if (e instanceof Error && "code" in e && e.code === "ENOENT") return null;
    throw e;
  }
  const state: unknown = JSON.parse(text);
  const after = typeof state === "object" && state !== null && "after" in state ? state.after : undefined;
  if (typeof after !== "string" || !/^\d+$/.test(after)) throw new Error(`${file} holds no "after" sequence; remove it or pass --after`);
  return after;
}

/** Written to a temporary file and renamed over the old one, so a crash mid-write leaves the previous position. */
function writeState(file: string, after: string): void {
  writeFileSync(`${file}.tmp`, `${JSON.stringify({ after })}\n`);
  renameSync(`${file}.tmp`, file);
}

function option(values: Record<string, string | boolean | undefined>, name: string): string {
  const v = values[name];
  if (typeof v !== "string" || v === "") throw new UsageError(`--${name} is required`);
  return v;
}

/** A partner token, renewed a minute before it expires. */
function tokenSource(baseUrl: string, clientId: string, clientSecret: string): () => Promise<string> {
  let token = "";
  let renewAt = 0;
  return async () => {
    if (Date.now() < renewAt) return token;
    const res = await fetch(`${baseUrl}/partner/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret }),
    });
    const body = (await res.json()) as { access_token?: string; expires_in?: number; detail?: string };
    if (res.status !== 200 || !body.access_token) throw new Error(`token request failed (${res.status}): ${body.detail ?? JSON.stringify(body)}`);
    token = body.access_token;
    renewAt = Date.now() + Math.max(0, (body.expires_in ?? 60) - 60) * 1000;
    return token;
  };
}

/**
 * A page of the feed, in `apiVersion` when one is given (else in the Application's pin), with the version the feed
 * answered in: its events' bodies are rendered in it, so their forwards carry it as Api-Version.
 */
async function readPage(
  baseUrl: string,
  token: string,
  after: string,
  types: string | undefined,
  apiVersion: ApiVersion | undefined,
): Promise<{ page: FeedPage; apiVersion: ApiVersion }> {
  const query = new URLSearchParams({ after, limit: "100", ...(types ? { types } : {}) });
  const res = await fetch(`${baseUrl}/public/v1/events?${query}`, {
    headers: { authorization: `Bearer ${token}`, ...(apiVersion ? { [API_VERSION_HEADER]: apiVersion } : {}) },
  });
  if (res.status !== 200) throw new Error(`GET /public/v1/events answered ${res.status}: ${await res.text()}`);
  const answered = res.headers.get(API_VERSION_HEADER);
  if (!isApiVersion(answered)) {
    throw new Error(
      `GET /public/v1/events answered in API version ${answered ?? "(none)"}, which this partner-listen does not know: rebuild it from the service's current code`,
    );
  }
  return { page: (await res.json()) as FeedPage, apiVersion: answered };
}

async function forward(target: string, event: Envelope, apiVersion: ApiVersion, secret: string, deliveryId: string = randomUUID()): Promise<string> {
  const body = JSON.stringify(event);
  const headers = deliveryHeaders({ deliveryId, eventId: event.eventId, eventType: event.eventType, body, secrets: [secret], apiVersion });
  const started = Date.now();
  try {
    const res = await fetch(target, { method: "POST", headers, body, redirect: "manual", signal: AbortSignal.timeout(10_000) });
    await res.arrayBuffer();
    return `${res.status} (${Date.now() - started} ms)`;
  } catch (err) {
    return `failed: ${err instanceof Error ? err.message : String(err)}`;
  }
}

const DRILL_KEYS = new Map<string, keyof Drill>([
  ["duplicate", "duplicateRate"],
  ["reorder", "reorderWindowSeconds"],
  ["delay", "maxDelaySeconds"],
]);

/** `duplicate=0.5,reorder=10,delay=5`: each optional (0 when left out), at least one above 0, in the ranges PATCH drill takes. */
function parseDrill(spec: string): Drill {
  const drill: Drill = { duplicateRate: 0, reorderWindowSeconds: 0, maxDelaySeconds: 0 };
  for (const part of spec.split(",")) {
    const eq = part.indexOf("=");
    const field = eq > 0 ? DRILL_KEYS.get(part.slice(0, eq).trim()) : undefined;
    const text = part.slice(eq + 1).trim();
    const value = Number(text);
    const inRange = field === "duplicateRate" ? value >= 0 && value <= 1 : Number.isInteger(value) && value >= 0 && value <= MAX_DRILL_SECONDS;
    if (!field || text === "" || !inRange) {
      throw new UsageError(
        `--drill takes duplicate=<0 to 1>, reorder=<0 to ${MAX_DRILL_SECONDS} s> and delay=<0 to ${MAX_DRILL_SECONDS} s>, comma-separated; "${part}" is not one`,
      );
    }
    drill[field] = value;
  }
  if (isIdle(drill)) throw new UsageError("--drill needs at least one of duplicate, reorder and delay above 0");
  return drill;
}

/**
 * Forwards events under a drill: each held (reorder window plus delay) and some sent twice, with the delivery id of
 * the first send. The state file moves past an event only once it and every earlier one went out, so a restart
 * repeats what was still held instead of losing it. `stop` drops what is held (the state file has not passed it);
 * so does a failure (the state file cannot be written, say), which `settled` then throws.
 */
function drilledForwarding(
  drill: Drill,
  send: (event: Envelope, apiVersion: ApiVersion, deliveryId: string, mark: AttemptDrill | null) => Promise<void>,
  save: (sequence: number) => void,
) {
  const waiting: { sequence: number; sent: boolean }[] = [];
  const running = new Set<Promise<void>>();
  const stopped = new AbortController();
  let failure: { error: unknown } | null = null;
  const drilled = async (event: Envelope, apiVersion: ApiVersion, slot: { sequence: number; sent: boolean }) => {
    const hold = holdOf(drill);
    const deliveryId = randomUUID();
    await sleep(hold?.ms ?? 0, undefined, { signal: stopped.signal });
    await send(event, apiVersion, deliveryId, hold?.drill ?? null);
    slot.sent = true;
    let gone = 0;
    while (gone < waiting.length && waiting[gone].sent) gone++;
    if (gone > 0) save(waiting.splice(0, gone)[gone - 1].sequence);
    const again = duplicateAfterMs(drill);
    if (again === null) return;
    await sleep(again, undefined, { signal: stopped.signal });
    await send(event, apiVersion, deliveryId, "duplicate");
  };
  return {
    add(event: Envelope, apiVersion: ApiVersion): void {
      const slot = { sequence: event.sequence, sent: false };
      waiting.push(slot);
      const run = drilled(event, apiVersion, slot).catch((error: unknown) => {
        // A stop rejects the held sleeps (what they held is resent after a restart); anything else ends the command.
        if (stopped.signal.aborted) return;
        failure = { error };
        stopped.abort();
      });
      running.add(run);
      void run.finally(() => running.delete(run));
    },
    settled: async (): Promise<void> => {
      while (running.size > 0) await Promise.all(running);
      if (failure) throw failure.error;
    },
    stopped: (): boolean => stopped.signal.aborted,
    stop: (): void => stopped.abort(),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      "base-url": { type: "string" },
      "api-version": { type: "string" },
      "client-id": { type: "string" },
      "client-secret": { type: "string" },
      "forward-to": { type: "string" },
      types: { type: "string" },
      after: { type: "string" },
      state: { type: "string" },
      secret: { type: "string" },
      interval: { type: "string" },
      drill: { type: "string" },
      once: { type: "boolean" },
      help: { type: "boolean" },
    },
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const baseUrl = option(values, "base-url").replace(/\/$/, "");
  const target = option(values, "forward-to");
  const token = tokenSource(baseUrl, option(values, "client-id"), option(values, "client-secret"));
  const interval = Number(values.interval ?? 1000);
  if (!Number.isInteger(interval) || interval < 50) throw new UsageError("--interval must be an integer of at least 50 (ms)");
  if (values.after !== undefined && !/^\d+$/.test(values.after)) throw new UsageError("--after must be a sequence number");
  const drill = values.drill === undefined ? null : parseDrill(values.drill);
  const apiVersion = values["api-version"];
  if (apiVersion !== undefined && !isApiVersion(apiVersion)) {
    throw new UsageError(`--api-version must be one of ${API_VERSIONS.join(", ")}; "${apiVersion}" is not an API version`);
  }
  const secret = values.secret ?? generateWebhookSecret();
  if (!values.secret) process.stdout.write(`Signing with ${secret} (pass --secret to choose one)\n`);

  const stateFile = resolve(values.state ?? ".listen-state.json");
  let cursor = values.after ?? readState(stateFile) ?? undefined;
  if (cursor === undefined) {
    // From now on: skip what the feed already holds.
    cursor = "0";
    for (;;) {
      const { page } = await readPage(baseUrl, await token(), cursor, values.types, apiVersion);
      cursor = page.pagination.nextCursor;
      if (!page.pagination.hasMore) break;
    }
  }
  process.stdout.write(`Forwarding events after ${cursor} to ${target}${drill ? ` under the drill ${values.drill}` : ""}\n`);
  const drilled = drill
    ? drilledForwarding(
        drill,
        async (event, version, deliveryId, mark) => {
          const outcome = await forward(target, event, version, secret, deliveryId);
          process.stdout.write(`${event.sequence} ${event.eventType} ${event.eventId} -> ${outcome}${mark ? ` [${mark}]` : ""}\n`);
        },
        (sequence) => writeState(stateFile, String(sequence)),
      )
    : null;
  let stopping = false;
  process.on("SIGINT", () => {
    stopping = true;
    drilled?.stop();
  });
  while (!stopping && !drilled?.stopped()) {
    const { page, apiVersion: answered } = await readPage(baseUrl, await token(), cursor, values.types, apiVersion);
    for (const event of page.data) {
      if (drilled) {
        drilled.add(event, answered);
        continue;
      }
      process.stdout.write(`${event.sequence} ${event.eventType} ${event.eventId} -> ${await forward(target, event, answered, secret)}\n`);
      // Saved after each forward: a restart repeats nothing already sent.
      writeState(stateFile, String(event.sequence));
    }
    cursor = page.pagination.nextCursor;
    if (page.pagination.hasMore) continue;
    if (values.once) break;
    await new Promise((r) => setTimeout(r, interval));
  }
  await drilled?.settled();
}

main().catch((e: unknown) => {
  if (e instanceof UsageError || (e instanceof TypeError && "code" in e && String(e.code).startsWith("ERR_PARSE_ARGS"))) {
    process.stderr.write(`${e.message}\n\n${USAGE}`);
    process.exit(2);
  }
  process.stderr.write(`partner-listen: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
