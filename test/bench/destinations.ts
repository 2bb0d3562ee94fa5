import { randomBytes } from "node:crypto";
import amqp from "amqplib";
import { connect as natsConnect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import type pg from "pg";
import type { BenchContext, ModuleResult } from "./context.js";
import { FAN_OUT_TASK } from "../../src/platform/events/outbox.js";
import { measure, PRODUCE_EVENTS, summary, type Arrivals, type ThroughputRun } from "./delivery-throughput.js";
import { portOpen } from "../helpers/redis.js";
import { createApplications, createSandboxStores, fetchTokens, type BenchTenant } from "./lib/tenants.js";
import { serviceCommand, startService } from "./lib/processes.js";
import { startReceiver } from "./lib/receiver.js";
import { fmt } from "./lib/report.js";

/**
 * Deliveries to the broker destinations next to HTTP, one worker process: RabbitMQ (publisher confirms) and NATS
 * JetStream (stream acks) where they run on 127.0.0.1, and the HTTP receiver, each over endpoints of its own sandbox
 * stores. After an unmeasured warm-up, each type in turn gets the throughput module's steady load (events at a rate
 * for `seconds`, then a drain) in every round, the order rotating; the figures are deliveries per second in the window and the worker's (and the
 * database's) CPU per delivery. Every message is consumed here and counted by event id: none may be lost. A broker that
 * does not run is skipped with a note.
 */

const STORES_PER_TYPE = 3;
const GOAL = "zero lost; worker CPU per delivery no more than HTTP's";

/** Messages consumed from a broker, by event id, counted as the HTTP receiver counts requests. */
class Consumed implements Arrivals {
  readonly firstArrival = new Map<string, number>();
  duplicates = 0;

  add(eventId: string | undefined): void {
    if (!eventId) return;
    if (this.firstArrival.has(eventId)) this.duplicates++;
    else this.firstArrival.set(eventId, performance.timeOrigin + performance.now());
  }
}

interface Kind {
  name: string;
  arrivals: Arrivals;
  /** The endpoint's registration body for one store. */
  endpoint(tenant: BenchTenant): Record<string, unknown>;
  /** Gives the endpoint's secret to the consumer, when it checks signatures. */
  registered?(tenant: BenchTenant, secret: string): void;
  close(): Promise<void>;
}

async function httpKind(): Promise<Kind> {
  const receiver = await startReceiver();
  const path = (t: BenchTenant) => `/destinations/${t.storeCode}`;
  return {
    name: "HTTP",
    arrivals: receiver,
    endpoint: (t) => ({ url: receiver.url(path(t)) }),
    registered: (t, secret) => receiver.setSecret(path(t), secret),
    close: () => receiver.close(),
  };
}

/** A topic exchange of the run's, all its messages to one exclusive queue consumed here. */
async function rabbitKind(run: string): Promise<Kind> {
  const url = "amqp://guest:guest@127.0.0.1:5672";
  const conn = await amqp.connect(url);
  const ch = await conn.createChannel();
  const exchange = `${run}.events`;
  await ch.assertExchange(exchange, "topic", { autoDelete: true });
  const { queue } = await ch.assertQueue("", { exclusive: true });
  await ch.bindQueue(queue, exchange, "#");
  const consumed = new Consumed();
  await ch.consume(queue, (msg) => consumed.add(msg?.properties.messageId as string | undefined), { noAck: true });
  return {
    name: "RabbitMQ",
    arrivals: consumed,
    endpoint: () => ({ type: "rabbitmq", url, exchange, routingKey: "{storeCode}.{eventType}" }),
    close: () => conn.close(),
  };
}

/** A JetStream stream of the run's subjects, removed at the end; its messages seen by a subscription here. */
async function natsKind(run: string): Promise<Kind> {
  const nc = await natsConnect({ servers: "127.0.0.1:4222" });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: run, subjects: [`${run}.>`] });
  const consumed = new Consumed();
  nc.subscribe(`${run}.>`, { callback: (_err, m) => consumed.add(m.headers?.get("Nats-Msg-Id")) });
  return {
    name: "NATS",
    arrivals: consumed,
    endpoint: () => ({ type: "nats", servers: ["nats://127.0.0.1:4222"], subject: `${run}.{storeCode}.{eventType}` }),
    close: async () => {
      await jsm.streams.delete(run);
      await nc.close();
    },
  };
}

export async function benchDestinations(ctx: BenchContext, seconds: number, rate: number): Promise<ModuleResult> {
  const run = `bench-${randomBytes(4).toString("hex")}`;
  const notes: string[] = [];
  const kinds: Kind[] = [await httpKind()];
  const brokers = [
    { name: "RabbitMQ", port: 5672, open: () => rabbitKind(run) },
    { name: "NATS", port: 4222, open: () => natsKind(run) },
  ];
  for (const b of brokers) {
    if (await portOpen("127.0.0.1", b.port)) kinds.push(await b.open());
    else notes.push(`destinations: ${b.name} is not running on 127.0.0.1:${b.port}: skipped`);
  }
  for (const n of notes) ctx.say(n);
  try {
    // Stores of its own: other modules' endpoints on the shared sandbox stores would receive these events too.
    const plans = await createSandboxStores(ctx.databaseUrl, STORES_PER_TYPE * kinds.length, "BENCHDST");
    const { secret, credentials } = await createApplications(ctx.databaseUrl, plans);
    const tenants = await fetchTokens(ctx.api.baseUrl, secret, credentials);
    const storesOf = new Map<Kind, string[]>();
    for (const [i, kind] of kinds.entries()) {
      const mine = tenants.slice(i * STORES_PER_TYPE, (i + 1) * STORES_PER_TYPE);
      for (const tenant of mine) {
        const res = await fetch(`${ctx.api.baseUrl}/public/v1/webhooks`, {
          method: "POST",
          headers: { authorization: `Bearer ${tenant.token}`, "content-type": "application/json" },
          body: JSON.stringify({ ...kind.endpoint(tenant), events: ["order.created"], rateLimit: 10_000 }),
        });
        const body = (await res.json()) as { secret?: string };
        if (res.status !== 201 || !body.secret) throw new Error(`registering a ${kind.name} endpoint: ${res.status} ${JSON.stringify(body)}`);
        kind.registered?.(tenant, body.secret);
      }
      storesOf.set(
        kind,
        mine.map((t) => t.storeId),
      );
    }
    const worker = await startService({
      name: "destinations-worker",
      ...serviceCommand("worker", ctx.apiEnv),
      logDir: ctx.logDir,
      ready: /"msg":"worker started"/,
    });
    const load = (kind: Kind, length: number) => {
      const stores = storesOf.get(kind) ?? [];
      return measure(ctx, kind.arrivals, worker, length, rate, async (client: pg.Client, n: number) =>
        (await client.query<{ id: string }>(PRODUCE_EVENTS, [n, stores, FAN_OUT_TASK])).rows.map((row) => row.id),
      );
    };
    const runs = new Map<Kind, ThroughputRun[]>(kinds.map((k) => [k, []]));
    try {
      // Unmeasured: the first window would otherwise carry the worker's JIT and each broker connection's opening.
      ctx.say(`destinations: warming up, ${ctx.settings.warmup} s of load per type`);
      for (const kind of kinds) await load(kind, ctx.settings.warmup);
      for (let r = 0; r < ctx.settings.rounds; r++) {
        for (const kind of kinds.map((_, i) => kinds[(i + r) % kinds.length])) {
          ctx.say(`destinations, ${kind.name}, round ${r + 1}: offering ${fmt.int(rate)} events/s for ${seconds} s over ${STORES_PER_TYPE} endpoints`);
          const result = await load(kind, seconds);
          ctx.say(`  ${summary(result, rate)}`);
          runs.get(kind)?.push(result);
        }
      }
    } finally {
      await worker.stop();
    }
    const mean = (kind: Kind, figure: (r: ThroughputRun) => number) => {
      const list = runs.get(kind) ?? [];
      return list.reduce((sum, r) => sum + figure(r), 0) / list.length;
    };
    const total = (kind: Kind, figure: (r: ThroughputRun) => number) => (runs.get(kind) ?? []).reduce((sum, r) => sum + figure(r), 0);
    const line = (kind: Kind) => {
      const database = mean(kind, (r) => r.databaseCpuMsPerDelivery);
      return `${kind.name} ${fmt.int(mean(kind, (r) => r.perSecond))}/s, worker CPU ${fmt.ms(mean(kind, (r) => r.cpuMsPerDelivery))}${Number.isNaN(database) ? "" : `, database CPU ${fmt.ms(database)}`} per delivery, ${fmt.int(total(kind, (r) => r.missing))} lost, ${fmt.int(total(kind, (r) => r.duplicates))} received twice`;
    };
    const http = kinds[0];
    const windows = `${ctx.settings.rounds} windows of ${seconds} s each at ${fmt.int(rate)} events/s offered, alternating, means`;
    return {
      verdicts: kinds.slice(1).map((kind) => {
        const workerCpu = mean(kind, (r) => r.cpuMsPerDelivery);
        return {
          benchmark: `Deliveries to ${kind.name}, one worker process, ${seconds} s`,
          figure: line(kind),
          against: `${line(http)} (same run, ${windows})`,
          value: mean(kind, (r) => r.perSecond),
          goal: GOAL,
          pass: total(kind, (r) => r.missing) === 0 && workerCpu <= mean(http, (r) => r.cpuMsPerDelivery),
        };
      }),
      measurements: [],
      notes: [`destinations (${windows}): ${kinds.map(line).join("; ")}`, ...notes],
    };
  } finally {
    for (const kind of kinds) await kind.close().catch(() => undefined);
  }
}
