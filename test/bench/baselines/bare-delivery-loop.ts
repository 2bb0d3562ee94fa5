import http from "node:http";
import pg from "pg";
import { signatureHeader } from "../../../src/modules/webhooks/signing.js";

/**
 * The bare delivery loop the sustained-deliveries benchmark measures ours against: a careful hand-written worker with
 * nothing but the four steps, two statements per batch. Each of LOOPS loops fetches up to BATCH queued events with
 * SKIP LOCKED and marks them claimed (BARE_FETCH, joined to their event and endpoint), signs each body once
 * (HMAC-SHA256, the header the receiver checks), POSTs them all over keep-alive, then records them (BARE_RECORD: one
 * row per delivery, the queue rows deleted). As graphile-worker's lock, the claim is a column, not a transaction held
 * across the POSTs: a crash leaves its batch claimed, for a sweep this baseline does not run to hand back (at least once
 * then). No schedule, no attempt log, no pace, no drills. The bench creates its tables (BARE_TABLES in
 * ../lib/webhooks.ts) and produces the events.
 */

// The queue is walked in id order through its primary key from past the highest id this process has claimed, so a
// fetch steps over neither the rows other loops claimed nor the index entries of rows deleted since the last vacuum;
// a loop that finds nothing looks from the head again. The claim is materialized: inlined in the join, the planner may
// run it once per endpoint.
const BARE_FETCH = {
  name: "bare_fetch",
  text: `with j as materialized (
      update bench_bare_job b set claimed_at = now()
      from (select id from bench_bare_job where id > $2 and claimed_at is null order by id limit $1 for update skip locked) c
      where b.id = c.id
      returning b.id, b.event_id
    )
    select j.id as job_id, ev.id, ev.type, ev.data, ev."createdAt", ev.sequence::float8 as sequence, e.id as endpoint_id, e.url
    from j join "Event" ev on ev.id = j.event_id
    join "WebhookEndpoint" e on e."storeId" = ev."storeId" and e.status = 'ACTIVE' and ev.type = any(e.events)`,
} as const;

const BARE_RECORD = {
  name: "bare_record",
  text: `with recorded as (
      insert into bench_bare_delivery (event_id, endpoint_id, http_status) select * from unnest($1::uuid[], $2::uuid[], $3::int[])
    )
    delete from bench_bare_job where id = any($4::bigint[])`,
} as const;

interface Row {
  job_id: string;
  id: string;
  type: string;
  data: unknown;
  createdAt: Date;
  sequence: number;
  endpoint_id: string;
  url: string;
}

const LOOPS = Number(process.env.BARE_LOOPS ?? 4);
const BATCH = Number(process.env.BARE_BATCH ?? 128);
/** How long a loop that found nothing waits before it looks again. */
const IDLE_MS = 20;
/** The receiver's secret for each endpoint URL. */
const secrets = new Map<string, string>(Object.entries(JSON.parse(process.env.BARE_SECRETS ?? "{}") as Record<string, string>));
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

function post(row: Row): Promise<number> {
  const body = JSON.stringify({ id: row.id, type: row.type, createdAt: row.createdAt, sequence: row.sequence, data: row.data });
  const headers = {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
    "x-service-event-id": row.id,
    "x-service-signature": signatureHeader([secrets.get(row.url) ?? "-"], Math.floor(Date.now() / 1000), body),
  };
  return new Promise((resolve) => {
    const req = http.request(row.url, { method: "POST", agent, headers }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", () => resolve(0));
    req.end(body);
  });
}

let stopping = false;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let cursor = "0";

async function loop(client: pg.Client): Promise<void> {
  while (!stopping) {
    const { rows } = await client.query<Row>({ ...BARE_FETCH, values: [BATCH, cursor] });
    if (rows.length === 0) {
      cursor = "0";
      await sleep(IDLE_MS);
      continue;
    }
    const last = rows.reduce((max, r) => (BigInt(r.job_id) > BigInt(max) ? r.job_id : max), cursor);
    if (BigInt(last) > BigInt(cursor)) cursor = last;
    const statuses = await Promise.all(rows.map(post));
    await client.query({ ...BARE_RECORD, values: [rows.map((r) => r.id), rows.map((r) => r.endpoint_id), statuses, rows.map((r) => r.job_id)] });
  }
}

const clients = await Promise.all(
  Array.from({ length: LOOPS }, async () => {
    // The queue table is new and not analysed during a run: walk its primary key whatever the planner estimates.
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL, options: "-c enable_seqscan=off" });
    await client.connect();
    return client;
  }),
);
const loops = clients.map(loop);
process.stdout.write(`${JSON.stringify({ msg: "worker started", name: "bare-delivery-loop" })}\n`);
process.on("SIGTERM", () => {
  stopping = true;
  void Promise.allSettled(loops)
    .then(() => Promise.all(clients.map((c) => c.end())))
    .finally(() => process.exit(0));
});
