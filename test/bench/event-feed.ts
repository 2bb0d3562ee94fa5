import pg from "pg";
import { interleave, sideBySide, type BenchContext, type Contender, type ModuleResult } from "./context.js";
import { startService } from "./lib/processes.js";
import type { Target } from "./lib/load.js";
import { fmt, type Measurement } from "./lib/report.js";

/**
 * GET /public/v1/events?limit=100 on a store with 1,000,000 events: a page from the start (after=0), from the
 * middle and from the end must cost the same (the cursor is the sequence, read through the unique index on
 * (storeId, sequence)). Each position is measured through the full stack and on a bare node:http + pg server
 * sending the same keyset statement (baselines/feed-pg-server.ts). The events are the deep store's, read with the
 * tokens of its Applications in turn, as several partners' readers would.
 */

const EVENTS = 1_000_000;
const LIMIT = 100;
/** Distinct cursors per position, a few apart, so the load does not repeat one page. */
const CURSORS = 10;
const PG = "node:http + pg";

/**
 * One INSERT … SELECT numbers the events itself. Bench-only: session_replication_role = replica skips the
 * `event_sequence` trigger (and the foreign-key triggers) for this session, so the sequences are given explicitly
 * and the store's counter is set after, as the trigger would have left it.
 */
async function generateEvents(url: string, storeId: string): Promise<number> {
  const t = performance.now();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("set synchronous_commit = off; set session_replication_role = replica");
    await client.query(
      `insert into "Event" (id, "storeId", type, data, "createdAt", sequence)
       select gen_random_uuid(), $1, t.type,
         jsonb_build_object('orderId', md5('o' || (n / 5))::uuid, 'status', t.status, 'version', 1 + n % 5),
         now() - ($2 - n) * interval '30 seconds', n
       from generate_series(1, $2::int) n
       cross join lateral (select (array['order.created', 'order.confirmed', 'order.preparing', 'order.ready', 'order.delivered'])[1 + n % 5] as type,
         (array['PENDING', 'CONFIRMED', 'PREPARING', 'READY', 'DELIVERED'])[1 + n % 5] as status) t`,
      [storeId, EVENTS],
    );
    await client.query(`insert into "StoreEventSequence" ("storeId", last) values ($1, $2) on conflict ("storeId") do update set last = excluded.last`, [
      storeId,
      EVENTS,
    ]);
    await client.query(`vacuum analyze "Event"`);
  } finally {
    await client.end();
  }
  return (performance.now() - t) / 1000;
}

export async function benchEventFeed(ctx: BenchContext): Promise<ModuleResult> {
  const [tenant] = ctx.deepTenants;
  const seconds = await generateEvents(ctx.databaseUrl, tenant.storeId);
  ctx.say(`event feed: ${fmt.int(EVENTS)} events in store ${tenant.storeCode}, generated in ${seconds.toFixed(0)} s`);
  const positions = [
    // As many distinct pages as the other positions: one page repeated stays warmer than ten.
    { name: "start", cursors: Array.from({ length: CURSORS }, (_, i) => i * 1000) },
    { name: "middle", cursors: Array.from({ length: CURSORS }, (_, i) => EVENTS / 2 + i * 1000) },
    // The last full pages: each still has a row beyond it, so hasMore is true as on the others.
    { name: "end", cursors: Array.from({ length: CURSORS }, (_, i) => EVENTS - LIMIT - 1 - i * 10) },
  ];
  const targets = (cursors: number[]): Target[] =>
    interleave(ctx.deepTenants.map((t) => cursors.map((c) => ({ path: `/public/v1/events?limit=${LIMIT}&after=${c}`, token: t.token }))));
  const baseline = await startService({
    name: "baseline-feed-pg",
    args: ["--import", "tsx", "test/bench/baselines/feed-pg-server.ts"],
    env: { DATABASE_URL: ctx.databaseUrl, DB_POOL_SIZE: ctx.apiEnv.DB_POOL_SIZE },
    logDir: ctx.logDir,
    ready: /"msg":"listening"/,
  });
  const notes: string[] = [];
  try {
    for (const p of positions) {
      const path = targets(p.cursors)[0].path;
      const texts = await Promise.all(
        [ctx.api, baseline].map(async (s) => {
          const res = await fetch(`${s.baseUrl}${path}`, { headers: { authorization: `Bearer ${tenant.token}` } });
          return `${res.status} ${await res.text()}`;
        }),
      );
      const body = JSON.parse(texts[0].slice(4)) as { data?: { sequence: number }[] };
      if (!texts[0].startsWith("200 ") || body.data?.length !== LIMIT || body.data[0].sequence !== p.cursors[0] + 1)
        notes.push(`event feed: the ${p.name} page answered ${texts[0].slice(0, 200)}`);
      else if (texts[1] !== texts[0]) notes.push(`event feed: the pg baseline answers the ${p.name} page differently from the façade`);
    }
    const contenders: Contender[] = positions.flatMap((p) => [
      { name: `façade, ${p.name}`, baseUrl: ctx.api.baseUrl, targets: targets(p.cursors), service: ctx.api },
      { name: `${PG}, ${p.name}`, baseUrl: baseline.baseUrl, targets: targets(p.cursors), service: baseline },
    ]);
    const results = await sideBySide(ctx, contenders);
    const measurements: Measurement[] = [];
    for (const c of contenders) {
      const r = results.get(c.name);
      if (!r) continue;
      measurements.push({ benchmark: "event feed", server: c.name, ...r });
      ctx.say(
        `  ${c.name}: ${fmt.int(r.rps)} req/s, p50 ${fmt.ms(r.p50)}, p99 ${fmt.ms(r.p99)}, CPU ${fmt.ms(r.cpuMsPerRequest ?? Number.NaN)}/req, database CPU ${fmt.ms(r.databaseCpuMsPerRequest ?? Number.NaN)}/req, failures ${r.failures}`,
      );
    }
    const facade = positions.map((p) => results.get(`façade, ${p.name}`)).filter((r) => r !== undefined);
    const pgRuns = positions.map((p) => results.get(`${PG}, ${p.name}`)).filter((r) => r !== undefined);
    const totalCpu = (r: (typeof facade)[number]) => (r.cpuMsPerRequest ?? Number.NaN) + (r.databaseCpuMsPerRequest ?? 0);
    const spread = (values: number[]) => Math.max(...values) / Math.min(...values);
    const cpuSpread = spread(facade.map(totalCpu));
    const p50Spread = spread(facade.map((r) => r.p50));
    const clean = notes.length === 0 && [...results.values()].every((r) => r.failures === 0);
    const perPosition = (list: typeof facade, f: (r: (typeof facade)[number]) => number) => list.map((r) => fmt.ms(f(r))).join(" / ");
    return {
      verdicts: [
        {
          benchmark: `Event feed page (limit ${LIMIT}) at start / middle / end of ${fmt.int(EVENTS)} events, CPU per request (server + database)`,
          figure: `${fmt.ratio(cpuSpread)} max/min (${perPosition(facade, totalCpu)}; pg baseline ${perPosition(pgRuns, totalCpu)})`,
          against: "the other positions",
          value: cpuSpread,
          goal: "≤ 1.2×",
          pass: clean && cpuSpread <= 1.2,
        },
        {
          benchmark: `Event feed page at start / middle / end, p50 latency`,
          figure: `${fmt.ratio(p50Spread)} max/min (${perPosition(facade, (r) => r.p50)}; pg baseline ${perPosition(pgRuns, (r) => r.p50)})`,
          against: "the other positions",
          value: p50Spread,
          goal: "≤ 1.2×",
          pass: clean && p50Spread <= 1.2,
        },
      ],
      measurements,
      notes,
    };
  } finally {
    await baseline.stop();
  }
}
