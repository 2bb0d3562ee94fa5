import pg from "pg";
import { interleave, sideBySide, type BenchContext, type Contender, type ModuleResult } from "./context.js";
import { scriptCommand, startService, watchRss, type Service } from "./lib/processes.js";
import type { Target } from "./lib/load.js";
import { fmt, type Measurement, type Verdict } from "./lib/report.js";

/**
 * GET /public/v1/orders?limit=20 and GET /public/v1/orders/{id} through the full stack, side by side with
 * (a) the same query on bare node:http + pg, and (b) the same route without GraphQL: the service's own pipeline
 * with the operation answered by a direct Prisma call. (b′), the Prisma call on bare node:http, is measured for
 * information: it shows what the pipeline costs. Also records the API process's peak resident memory.
 */

const PG = "(a) node:http + pg";
const PRISMA_ROUTE = "(b) service pipeline + Prisma, no GraphQL";
const PRISMA_BARE = "(b′) node:http + Prisma, no pipeline";

const DETAIL_ORDERS_PER_TENANT = 10;

async function detailTargets(ctx: BenchContext): Promise<Target[]> {
  const client = new pg.Client({ connectionString: ctx.databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ storeId: string; id: string }>(
      `select o."storeId", o.id from unnest($1::uuid[]) as s(id)
       cross join lateral (select id, "storeId" from "Order" where "storeId" = s.id and "orderNumber" % 37 = 5 limit $2) o`,
      [ctx.tenants.map((t) => t.storeId), DETAIL_ORDERS_PER_TENANT],
    );
    return interleave(ctx.tenants.map((t) => rows.filter((r) => r.storeId === t.storeId).map((r) => ({ path: `/public/v1/orders/${r.id}`, token: t.token }))));
  } finally {
    await client.end();
  }
}

/** The baselines must answer what the API answers, byte for byte, or the comparison means nothing. */
async function sameAnswers(servers: readonly Service[], targets: readonly Target[]): Promise<string | null> {
  for (const t of targets) {
    const texts = await Promise.all(
      servers.map(async (s) => {
        const res = await fetch(`${s.baseUrl}${t.path}`, { headers: { authorization: `Bearer ${t.token}` } });
        return `${res.status} ${await res.text()}`;
      }),
    );
    const differs = texts.findIndex((x) => x !== texts[0]);
    if (!texts[0].startsWith("200 ")) return `${servers[0].name} answered ${t.path} with ${texts[0].slice(0, 300)}`;
    if (differs > 0)
      return `${servers[differs].name} answers ${t.path} differently from ${servers[0].name}:\n  ${texts[0].slice(0, 300)}\n  ${texts[differs].slice(0, 300)}`;
  }
  return null;
}

export async function benchReads(ctx: BenchContext): Promise<ModuleResult> {
  const env = { DATABASE_URL: ctx.databaseUrl, DB_POOL_SIZE: ctx.apiEnv.DB_POOL_SIZE };
  const start = (name: string, command: { args: string[]; env: Record<string, string> }) =>
    startService({ name, ...command, logDir: ctx.logDir, ready: /"msg":"listening"/ });
  const bare = (file: string) => ({ args: ["--import", "tsx", `test/bench/baselines/${file}`], env });
  // Baseline (b) is the service with GraphQL swapped out: the API's configuration, `npm start`'s environment and
  // Node flags (the old-space cap changes how often V8 collects), so the code is the only difference.
  const [pgBaseline, prismaRoute, prismaBare] = await Promise.all([
    start("baseline-pg", bare("pg-server.ts")),
    start("baseline-prisma-route", scriptCommand("test/bench/baselines/prisma-route-server.ts", ctx.apiEnv)),
    start("baseline-prisma", bare("prisma-server.ts")),
  ]);
  const verdicts: Verdict[] = [];
  const measurements: Measurement[] = [];
  const notes: string[] = [];
  try {
    const routes = [
      {
        name: "GET /public/v1/orders?limit=20",
        short: "list",
        targets: interleave(ctx.tenants.map((t) => [{ path: "/public/v1/orders?limit=20", token: t.token }])),
      },
      { name: "GET /public/v1/orders/{id}", short: "detail", targets: await detailTargets(ctx) },
    ];
    const servers = [ctx.api, pgBaseline, prismaRoute, prismaBare];
    const rss = watchRss(ctx.api);
    let peak: number;
    try {
      for (const route of routes) {
        ctx.say(`${route.name}: ${route.targets.length} distinct requests over ${ctx.tenants.length} tenants`);
        const mismatch = await sameAnswers(servers, route.targets.slice(0, 20));
        if (mismatch) notes.push(`${route.short}: ${mismatch}`);
        const contenders: Contender[] = [
          { name: "façade", baseUrl: ctx.api.baseUrl, targets: route.targets, service: ctx.api },
          { name: PG, baseUrl: pgBaseline.baseUrl, targets: route.targets, service: pgBaseline },
          { name: PRISMA_ROUTE, baseUrl: prismaRoute.baseUrl, targets: route.targets, service: prismaRoute },
          { name: PRISMA_BARE, baseUrl: prismaBare.baseUrl, targets: route.targets, service: prismaBare },
        ];
        const results = await sideBySide(ctx, contenders);
        for (const c of contenders) {
          const r = results.get(c.name);
          if (!r) continue;
          measurements.push({ benchmark: route.short, server: c.name, ...r });
          const cpu = r.cpuMsPerRequest === undefined ? "" : `, CPU ${fmt.ms(r.cpuMsPerRequest)}/req`;
          const databaseCpu = r.databaseCpuMsPerRequest === undefined ? "" : `, database CPU ${fmt.ms(r.databaseCpuMsPerRequest)}/req`;
          ctx.say(`  ${c.name}: ${fmt.int(r.rps)} req/s, p50 ${fmt.ms(r.p50)}, p99 ${fmt.ms(r.p99)}${cpu}${databaseCpu}, failures ${r.failures}`);
        }
        const ours = results.get("façade");
        for (const [baseline, goal] of [
          [PG, 0.5],
          [PRISMA_ROUTE, 0.9],
        ] as const) {
          const theirs = results.get(baseline);
          if (!ours || !theirs) continue;
          const ratio = ours.rps / theirs.rps;
          const clean = ours.failures === 0 && theirs.failures === 0 && !mismatch;
          verdicts.push({
            benchmark: `${route.name} throughput`,
            figure: `${fmt.ratio(ratio)} (${fmt.int(ours.rps)} vs ${fmt.int(theirs.rps)} req/s; p50 ${fmt.ms(ours.p50)} vs ${fmt.ms(theirs.p50)}, p99 ${fmt.ms(ours.p99)} vs ${fmt.ms(theirs.p99)})`,
            against: baseline,
            value: ratio,
            goal: `≥ ${goal}×`,
            pass: clean && ratio >= goal,
          });
        }
      }
    } finally {
      peak = rss.stop();
    }
    verdicts.push({
      benchmark: "Resident memory of one API process under the read load",
      figure: `${peak.toFixed(0)} MiB peak`,
      against: "—",
      value: peak,
      goal: "≤ 200 MB",
      pass: peak <= 200,
    });
    return { verdicts, measurements, notes };
  } finally {
    await Promise.all([pgBaseline.stop(), prismaRoute.stop(), prismaBare.stop()]);
  }
}
