import { bundled, freePort, runProcess, type ServiceProcess } from "../helpers/process.js";
import { expect } from "vitest";
import type { ApiResponse } from "../helpers/tenants.js";
import { ADMIN_KEY } from "../helpers/tenants.js";
import type { TestApp } from "../helpers/app.js";
import { OAUTH_PATHS } from "../../src/rest/platform-routes.js";

/**
 * Asserts a problem answer: problem+json, or at the token endpoints an OAuth 2.0 error response (application/json
 * with `error` and `error_description` beside the problem's fields); `field`, when given, must be among its
 * `errors[].field`.
 */
export function expectProblem(res: ApiResponse<unknown>, status: number, code: string, field?: string): Record<string, unknown> {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  const body = res.body as Record<string, unknown>;
  const oauth = typeof body.instance === "string" && OAUTH_PATHS.has(body.instance);
  if (oauth) expect(res.headers.get("content-type")).toBe("application/json");
  else expect(res.headers.get("content-type")).toContain("application/problem+json");
  if (oauth) expect(body).toMatchObject({ error: expect.any(String), error_description: body.detail });
  expect(body).toMatchObject({ status, code, retryable: status >= 500 || status === 429 });
  for (const f of ["type", "title", "detail", "instance", "requestId", "traceId"]) expect(typeof body[f]).toBe("string");
  if (field) expect((body.errors as { field: string }[] | undefined)?.map((e) => e.field)).toContain(field);
  return body;
}

/**
 * Row counts of every table but the rate-limit counters (which every authenticated request rightly
 * increments): equal counts before and after a refused write show it wrote nothing.
 */
export async function tableCounter(app: TestApp): Promise<() => Promise<Record<string, number>>> {
  const { rows } = await app.services.pool.query<{ name: string }>(
    `SELECT format('%I.%I', table_schema, table_name) AS name FROM information_schema.tables
     WHERE table_schema IN ('public', 'graphile_worker') AND table_type = 'BASE TABLE' AND table_name <> 'RateLimitCounter'`,
  );
  const sql = `SELECT ${rows.map((r, i) => `(SELECT count(*) FROM ${r.name})::int AS t${i}`).join(", ")}`;
  return async () => {
    const {
      rows: [counts],
    } = await app.services.pool.query<Record<string, number>>(sql);
    return Object.fromEntries(rows.map((r, i) => [r.name, counts[`t${i}`]]));
  };
}

/**
 * The limiter's buckets are whole minutes of the database clock (this machine's). A test that counts to a limit
 * starts early in a minute, so the previous minute's weight cannot blur the boundary it asserts.
 */
export async function startOfFreshMinute(neededSeconds: number): Promise<void> {
  const left = 60 - ((Date.now() / 1000) % 60);
  if (left < neededSeconds) await new Promise((r) => setTimeout(r, left * 1000 + 200));
}

export interface ApiProcess extends ServiceProcess {
  baseUrl: string;
}

/**
 * `src/cli/start.ts --role <role>` (bundled) as its own node process (no npm between, so signals reach it directly), once it
 * answers /readyz. An api process is reached on PORT; a worker on METRICS_PORT (or PORT, its default), where it
 * serves /metrics, /healthz and /readyz. It sees only the environment given here, none of the test run's.
 */
export async function startApiProcess(
  databaseUrl: string,
  env: Record<string, string> = {},
  role: "api" | "worker" = "api",
  portVar: "PORT" | "METRICS_PORT" = role === "api" ? "PORT" : "METRICS_PORT",
): Promise<ApiProcess> {
  const port = await freePort();
  const p = runProcess(
    process.execPath,
    [bundled("start"), "--role", role],
    {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      DATABASE_URL: databaseUrl,
      [portVar]: String(port),
      HOST: "127.0.0.1",
      ADMIN_API_KEY: ADMIN_KEY,
      PUBLIC_BASE_URL: "http://api.test.local",
      LOG_LEVEL: "info",
      DB_POOL_SIZE: "5",
      // As in startTestApp: bursts wait for their turn rather than being shed.
      HTTP_MAX_QUEUED: "1000",
      HTTP_QUEUE_TIMEOUT_MS: "30000",
      ...env,
    },
    { inheritEnv: false },
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  // Generous: a loaded machine (several suites at once) has taken over 35 s to start one.
  const deadline = Date.now() + 80_000;
  for (;;) {
    if (p.child.exitCode !== null) throw new Error(`${role} process exited early (${p.child.exitCode}):\n${p.output()}`);
    const ok = await fetch(`${baseUrl}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      p.child.kill("SIGKILL");
      throw new Error(`${role} process did not become ready:\n${p.output()}`);
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  return { ...p, baseUrl };
}

export async function stopApiProcess(p: ApiProcess): Promise<void> {
  if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGTERM");
  const timer = setTimeout(() => p.child.kill("SIGKILL"), 15_000);
  await p.exited;
  clearTimeout(timer);
}
