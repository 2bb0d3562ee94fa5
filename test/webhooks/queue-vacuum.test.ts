import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type pg from "pg";
import { Logger, run, type Runner } from "graphile-worker";
import { createTestDatabase } from "../helpers/database.js";
import { createLogger } from "../../src/platform/log.js";
import { startQueueVacuum, type QueueVacuum } from "../../workers/queue-vacuum.js";
import { createWorkerPool, workerTuning } from "../../workers/tuning.js";
import { waitFor } from "./receiver.js";

/** The worker's own vacuum of the jobs table: real graphile-worker runs real jobs on a database of its own. */

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let pool: pg.Pool;
let runner: Runner;
let vacuum: QueueVacuum | null = null;
let ran = 0;

beforeAll(async () => {
  database = await createTestDatabase();
  pool = createWorkerPool(database.url, 4, createLogger("silent"));
  runner = await run({
    pgPool: pool,
    ...workerTuning(4),
    noHandleSignals: true,
    taskList: { noop: async () => void ran++ },
    logger: new Logger(() => () => undefined),
  });
});

afterAll(async () => {
  vacuum?.stop();
  await runner?.stop();
  await pool?.end();
  await database?.drop();
});

/** Manual vacuums of the jobs table so far (autovacuum counts apart). */
async function jobsTableStats(): Promise<{ vacuums: number }> {
  const { rows } = await pool.query<{ vacuums: number }>(
    `select vacuum_count::int as vacuums from pg_stat_user_tables where schemaname = 'graphile_worker' and relname = '_private_jobs'`,
  );
  return rows[0];
}

async function runJobs(n: number): Promise<void> {
  const target = ran + n;
  await pool.query(
    "select graphile_worker.add_jobs(array(select row('noop', '{}'::json, null, null, null, null, null, null)::graphile_worker.job_spec from generate_series(1, $1)))",
    [n],
  );
  await waitFor(`${n} jobs to run`, async () => ran >= target && (await pool.query("select count(*)::int as n from graphile_worker.jobs")).rows[0].n === 0);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the jobs table vacuum", () => {
  it("waits until the worker has completed enough jobs, then vacuums the table, and again after as many more", async () => {
    vacuum = startQueueVacuum(runner, pool, createLogger("silent"), { jobsPerVacuum: 200, checkIntervalMs: 50 });
    const before = await jobsTableStats();

    await runJobs(150);
    await sleep(300);
    expect((await jobsTableStats()).vacuums).toBe(before.vacuums);

    await runJobs(100);
    const first = await waitFor("a vacuum", async () => {
      const s = await jobsTableStats();
      return s.vacuums > before.vacuums ? s : null;
    });
    expect(first.vacuums).toBe(before.vacuums + 1);
    // The count starts again: 150 more completions are not enough for another.
    await runJobs(150);
    await sleep(300);
    expect((await jobsTableStats()).vacuums).toBe(first.vacuums);
    await runJobs(100);
    await waitFor("a second vacuum", async () => (await jobsTableStats()).vacuums === first.vacuums + 1);
  });
});
