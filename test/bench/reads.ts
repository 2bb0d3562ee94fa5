import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { beforeOf, sideBySide, startBefore, type BenchContext, type Contender, type ModuleResult } from "./context.js";
import { scriptCommand, startService, type Service } from "./lib/processes.js";
import type { LoadResult, Target } from "./lib/load.js";
import { fmt, type Measurement, type Verdict } from "./lib/report.js";
import { type OrderRef, readRoutes, someOrders } from "./lib/read-routes.js";
import { API_VERSION_HEADER, FIRST_API_VERSION, LATEST_API_VERSION } from "../../src/platform/versions.js";

/**
 * GET /public/v1/orders?limit=20 and GET /public/v1/orders/{id} through the full stack, side by side with
 * - (a) a careful bare handler on node:http + pg (baselines/pg-server.ts): token and grant checked, one prepared
 *   statement per request; run twice, with the JSON built by PostgreSQL and in JS, and the cheaper of the two per
 *   route is the strong baseline the goals compare with;
 * - the Fastify + Prisma peer (baselines/fastify-prisma-server.ts): what a typical team writes without GraphQL;
 * - (b) the service's own pipeline with each operation answered by a direct Prisma call (prisma-route-server.ts),
 *   for information: its distance to the façade is what GraphQL costs;
 * - the façade again, each request sending `Api-Version: <latest>`: the tenants are pinned to the first version,
 *   which the baselines answer; the code answers in the latest version's shape and takes it back to the first by
 *   the declared version change, so the façade's CPU over this one is what that change costs.
 * The figure the goals use is CPU per request: the serving process plus the database server, from /proc (the
 * contenders take turns, so the database serves one of them at a time). req/s and p50/p99 are secondary: on a
 * shared machine they move with everyone else's work. Before any timing every contender must answer a sample of
 * requests exactly as the façade does, or the module fails.
 */

const SQL_JSON = "(a) node:http + pg, JSON in SQL";
const JS_JSON = "(a) node:http + pg, JSON in JS";
const FASTIFY = "Fastify + Prisma";
const PRISMA_ROUTE = "(b) service pipeline + Prisma, no GraphQL";
const FACADE = "façade";
const FACADE_LATEST = `façade, Api-Version ${LATEST_API_VERSION}`;
const FACADE_BEFORE = beforeOf(FACADE);

/** CPU per request of the strong baseline over the façade's, at least. */
const GOALS = { list: 0.5, detail: 0.4 } as const;

/** The same requests, answered in the latest version whatever the tenant's pin. */
const inLatest = <T extends Target>(targets: readonly T[]): T[] =>
  targets.map((t) => ({ ...t, headers: { ...t.headers, [API_VERSION_HEADER]: LATEST_API_VERSION } }));

/** A request of the equality check and the status the façade must give it. */
interface Probe extends Target {
  expect: number;
}

/**
 * At least 100 requests mixing first pages of several sizes, details, another tenant's order ids and an unknown id
 * (404), over many tenants.
 */
function probes(ctx: BenchContext, orders: readonly OrderRef[]): Probe[] {
  const t = ctx.tenants;
  const byStore = new Map(t.map((x) => [x.storeId, orders.filter((o) => o.storeId === x.storeId)]));
  const out: Probe[] = [];
  for (let i = 0; i < 30 && i < t.length; i++) {
    const limit = [20, 5, 1, 100][i % 4];
    out.push({ path: `/public/v1/orders?limit=${limit}`, token: t[i].token, expect: 200 });
    const own = byStore.get(t[i].storeId) ?? [];
    for (const o of own.slice(0, 2)) out.push({ path: `/public/v1/orders/${o.id}`, token: t[i].token, expect: 200 });
    const other = byStore.get(t[(i + 1) % t.length].storeId)?.[0];
    if (other) out.push({ path: `/public/v1/orders/${other.id}`, token: t[i].token, expect: 404 });
  }
  out.push({ path: `/public/v1/orders/${randomUUID()}`, token: t[0].token, expect: 404 });
  return out;
}

/**
 * Every contender must answer every probe with the façade's status and JSON (parsed and compared in full), and the
 * façade must answer in `version` (its `api-version` header): the probes' own header or the tenants' pin.
 */
async function sameAnswers(reference: Service, others: readonly Service[], sample: readonly Probe[], version: string): Promise<void> {
  if (sample.length < 100) throw new Error(`the equality sample has ${sample.length} requests, fewer than 100`);
  const differences: string[] = [];
  for (const p of sample) {
    // One request id for all, so problem bodies (which carry it) compare in full too.
    const headers = { ...p.headers, authorization: `Bearer ${p.token}`, "x-request-id": randomUUID() };
    const answers = await Promise.all(
      [reference, ...others].map(async (s) => {
        const res = await fetch(`${s.baseUrl}${p.path}`, { headers });
        const text = await res.text();
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // Not JSON: compared as text, and it differs from the façade's JSON.
        }
        return { status: res.status, body, text, version: res.headers.get(API_VERSION_HEADER) };
      }),
    );
    const [ours, ...theirs] = answers;
    if (ours.status !== p.expect) differences.push(`façade answered ${p.path} with ${ours.status}, not ${p.expect}: ${ours.text.slice(0, 300)}`);
    if (ours.version !== version) differences.push(`façade answered ${p.path} in version ${ours.version}, not ${version}`);
    theirs.forEach((a, i) => {
      if (a.status !== ours.status || !isDeepStrictEqual(a.body, ours.body))
        differences.push(
          `${others[i].name} answers ${p.path} differently:\n    façade ${ours.status} ${ours.text.slice(0, 300)}\n    it     ${a.status} ${a.text.slice(0, 300)}`,
        );
    });
  }
  if (differences.length)
    throw new Error(
      `read contenders disagree with the façade (${version}) on ${differences.length} answers of ${sample.length}:\n  ${differences.slice(0, 6).join("\n  ")}`,
    );
}

/** Server + database CPU per request, the goals' figure; server CPU alone when the database's cannot be measured. */
const cpuOf = (r: LoadResult): number => (r.cpuMsPerRequest ?? Number.NaN) + (r.databaseCpuMsPerRequest ?? 0);
const cpuText = (r: LoadResult): string =>
  r.databaseCpuMsPerRequest === undefined
    ? fmt.ms(cpuOf(r))
    : `${fmt.ms(cpuOf(r))} (${fmt.ms(r.cpuMsPerRequest ?? Number.NaN)} + ${fmt.ms(r.databaseCpuMsPerRequest)})`;

export async function benchReads(ctx: BenchContext): Promise<ModuleResult> {
  const env = { DATABASE_URL: ctx.databaseUrl, DB_POOL_SIZE: ctx.apiEnv.DB_POOL_SIZE, API_URL: ctx.api.baseUrl, ISSUER: ctx.apiEnv.PUBLIC_BASE_URL };
  const bare = (name: string, file: string, extra: Record<string, string> = {}) =>
    startService({
      name,
      args: ["--import", "tsx", `test/bench/baselines/${file}`],
      env: { ...env, ...extra },
      logDir: ctx.logDir,
      ready: /"msg":"listening"/,
    });
  // Baseline (b) is the service with GraphQL swapped out: the API's configuration, `npm start`'s environment and
  // Node flags (the old-space cap changes how often V8 collects), so the code is the only difference.
  const [sqlJson, jsJson, fastify, prismaRoute] = await Promise.all([
    bare("baseline-pg-sql", "pg-server.ts", { BASELINE_JSON: "sql" }),
    bare("baseline-pg-js", "pg-server.ts", { BASELINE_JSON: "js" }),
    bare("baseline-fastify-prisma", "fastify-prisma-server.ts"),
    startService({
      name: "baseline-prisma-route",
      ...scriptCommand("test/bench/baselines/prisma-route-server.ts", ctx.apiEnv),
      logDir: ctx.logDir,
      ready: /"msg":"listening"/,
    }),
  ]);
  const before = ctx.before ? await startBefore(ctx, ctx.before, "api") : undefined;
  const verdicts: Verdict[] = [];
  const measurements: Measurement[] = [];
  const notes: string[] = [];
  try {
    const orders = await someOrders(ctx);
    const sample = probes(ctx, orders);
    await sameAnswers(ctx.api, [sqlJson, jsJson, fastify, prismaRoute, ...(before ? [before] : [])], sample, FIRST_API_VERSION);
    // The baselines answer the first version only; in the latest, the façade is the reference for the build before.
    await sameAnswers(ctx.api, before ? [before] : [], inLatest(sample), LATEST_API_VERSION);
    ctx.say(
      `reads: all contenders answered ${sample.length} requests (lists, details, other tenants' ids) exactly as the façade, in ${FIRST_API_VERSION}${before ? ` and ${LATEST_API_VERSION}` : ""}; the façade answered them in ${LATEST_API_VERSION} when asked`,
    );
    const routes = readRoutes(ctx, orders).map((r) => ({ ...r, goal: GOALS[r.short] }));
    for (const route of routes) {
      ctx.say(`${route.name}: ${route.targets.length} distinct requests over ${ctx.tenants.length} tenants`);
      const contenders: Contender[] = [
        { name: FACADE, baseUrl: ctx.api.baseUrl, targets: route.targets, service: ctx.api },
        { name: FACADE_LATEST, baseUrl: ctx.api.baseUrl, targets: inLatest(route.targets), service: ctx.api },
        { name: SQL_JSON, baseUrl: sqlJson.baseUrl, targets: route.targets, service: sqlJson },
        { name: JS_JSON, baseUrl: jsJson.baseUrl, targets: route.targets, service: jsJson },
        { name: FASTIFY, baseUrl: fastify.baseUrl, targets: route.targets, service: fastify },
        { name: PRISMA_ROUTE, baseUrl: prismaRoute.baseUrl, targets: route.targets, service: prismaRoute },
        ...(before ? [{ name: FACADE_BEFORE, baseUrl: before.baseUrl, targets: route.targets, service: before }] : []),
      ];
      const results = await sideBySide(ctx, contenders);
      for (const c of contenders) {
        const r = results.get(c.name);
        if (!r) continue;
        measurements.push({ benchmark: route.short, server: c.name, ...r });
        ctx.say(`  ${c.name}: CPU ${cpuText(r)}/req, ${fmt.int(r.rps)} req/s, p50 ${fmt.ms(r.p50)}, p99 ${fmt.ms(r.p99)}, failures ${r.failures}`);
      }
      const ours = results.get(FACADE);
      const latest = results.get(FACADE_LATEST);
      const then = results.get(FACADE_BEFORE);
      if (ours && then)
        notes.push(
          `${route.short}: this build's CPU per request is ${fmt.ratio(cpuOf(ours) / cpuOf(then))} the build before's (CPU ${cpuText(ours)} vs ${cpuText(then)}; ${fmt.int(ours.rps)} vs ${fmt.int(then.rps)} req/s; p50 ${fmt.ms(ours.p50)} vs ${fmt.ms(then.p50)}, p99 ${fmt.ms(ours.p99)} vs ${fmt.ms(then.p99)}; failures ${ours.failures} vs ${then.failures})`,
        );
      if (ours && latest)
        notes.push(
          `${route.short}: ${FIRST_API_VERSION} costs ${fmt.ratio(cpuOf(ours) / cpuOf(latest))} ${LATEST_API_VERSION} (CPU ${cpuText(ours)} vs ${cpuText(latest)} per request; p50 ${fmt.ms(ours.p50)} vs ${fmt.ms(latest.p50)})`,
        );
      const sql = results.get(SQL_JSON);
      const js = results.get(JS_JSON);
      const peer = results.get(FASTIFY);
      if (!ours || !sql || !js || !peer) continue;
      const [strongName, strong] = cpuOf(sql) <= cpuOf(js) ? [SQL_JSON, sql] : [JS_JSON, js];
      notes.push(`${route.short}: the strong baseline is ${strongName} (CPU ${cpuText(strong)}/req; the other way ${cpuText(strong === sql ? js : sql)}/req)`);
      const clean = (r: LoadResult) => ours.failures === 0 && r.failures === 0;
      const figure = (r: LoadResult, ratio: number) =>
        `${fmt.ratio(ratio)} (CPU ${cpuText(ours)} vs ${cpuText(r)} per request; ${fmt.int(ours.rps)} vs ${fmt.int(r.rps)} req/s; p50 ${fmt.ms(ours.p50)} vs ${fmt.ms(r.p50)}, p99 ${fmt.ms(ours.p99)} vs ${fmt.ms(r.p99)})`;
      const versusStrong = cpuOf(strong) / cpuOf(ours);
      verdicts.push({
        benchmark: `${route.name}, CPU per request (server + database)`,
        figure: figure(strong, versusStrong),
        against: `(a) the strong baseline: ${strongName}`,
        value: versusStrong,
        goal: `≥ ${route.goal}×`,
        pass: clean(strong) && versusStrong >= route.goal,
      });
      const versusPeer = cpuOf(peer) / cpuOf(ours);
      verdicts.push({
        benchmark: `${route.name}, CPU per request (server + database)`,
        figure: figure(peer, versusPeer).replace(/^([\d.]+)×/, "$1× cheaper"),
        against: FASTIFY,
        value: versusPeer,
        goal: "≥ 2× cheaper",
        pass: clean(peer) && versusPeer >= 2,
      });
    }
    if (!ctx.databaseCpuSeconds) notes.push("reads: the database's CPU could not be measured (BENCH_DATABASE_URL): CPU per request is the server's alone");
    return { verdicts, measurements, notes };
  } finally {
    await Promise.all([sqlJson.stop(), jsJson.stop(), fastify.stop(), prismaRoute.stop(), before?.stop()]);
  }
}
