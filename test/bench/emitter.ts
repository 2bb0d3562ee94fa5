import { randomUUID } from "node:crypto";
import pg from "pg";
import { openPrisma } from "../../src/platform/db/prisma.js";
import { emitEvent, FAN_OUT_TASK } from "../../src/platform/events/outbox.js";
import type { EventData } from "../../src/platform/events/declaration.js";

/** What emitEvent writes, as one statement: the event row and its fan-out job (same payload and job key). */
const EMIT_SQL = `with ev as (insert into "Event" (id, "storeId", type, data) values (gen_random_uuid(), $1, $2, $3) returning id)
  select id, graphile_worker.add_job($4, json_build_object('eventId', id::text), job_key := 'fan_out:' || id) from ev`;

/**
 * The delivery-latency producer, in a process of its own so that its work (Prisma transactions) does not delay
 * the receiver's clock in the bench process. Emits RATE events per second for SECONDS and prints one line per
 * committed event: {"id", "at"} with `at` in epoch milliseconds (performance.timeOrigin + now(), the clock the
 * receiver uses too). Events go round robin over STORES (JSON array of store ids), each committed alone:
 * - MODE=events: one statement that writes what emitEvent writes (the event row and its fan_out_event job, same
 *   payload and job key), so the commit is the same and the producer costs the shared cores little;
 * - MODE=events-prisma: emitEvent itself in a Prisma interactive transaction (three round trips; at 200/s this
 *   process then takes about half a core, which the worker under test no longer has);
 * - MODE=queue: one graphile-worker job of TASK per event, payload { id, url: URL } (the queue baseline).
 */

const rate = Number(process.env.RATE);
const seconds = Number(process.env.SECONDS);
const stores = JSON.parse(process.env.STORES ?? "[]") as string[];
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let emit: (i: number) => Promise<string>;
let close: () => Promise<void>;
if (process.env.MODE === "events-prisma") {
  const db = openPrisma(process.env.DATABASE_URL ?? "", 10);
  emit = async (i) => {
    const data: EventData<"order.created"> = { orderId: randomUUID(), orderNumber: 1000 + i, total: 42.5, type: "DELIVERY", status: "PENDING", version: 1 };
    return (await db.$transaction((tx) => emitEvent(tx, stores[i % stores.length], "order.created", data))).id;
  };
  close = () => db.$disconnect();
} else if (process.env.MODE === "events") {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  emit = async (i) => {
    const data = { orderId: randomUUID(), orderNumber: 1000 + i, total: 42.5, type: "DELIVERY", status: "PENDING" };
    const { rows } = await pool.query<{ id: string }>(EMIT_SQL, [stores[i % stores.length], "order.created", data, FAN_OUT_TASK]);
    return rows[0].id;
  };
  close = () => pool.end();
} else {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  emit = async () => {
    const id = randomUUID();
    await pool.query("select graphile_worker.add_job($1, json_build_object('id', $2::text, 'url', $3::text))", [process.env.TASK, id, process.env.URL]);
    return id;
  };
  close = () => pool.end();
}

process.stdout.write(`${JSON.stringify({ msg: "emitting" })}\n`);
const inFlight = new Set<Promise<void>>();
const t0 = performance.now();
for (let i = 0; i < rate * seconds; i++) {
  const wait = t0 + (i * 1000) / rate - performance.now();
  if (wait > 0) await sleep(wait);
  const p = emit(i)
    .then((id) => void process.stdout.write(`${JSON.stringify({ id, at: now(), i })}\n`))
    .catch((e: unknown) => void process.stdout.write(`${JSON.stringify({ error: String(e).slice(0, 300) })}\n`));
  inFlight.add(p);
  void p.finally(() => inFlight.delete(p));
}
await Promise.all(inFlight);
await close();
process.stdout.write(`${JSON.stringify({ msg: "done" })}\n`);
