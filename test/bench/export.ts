import { serviceCommand, startService } from "./lib/processes.js";
import { fmt } from "./lib/report.js";
import type { BenchContext, ModuleResult } from "./context.js";

/**
 * Bulk export of the largest store's orders by a worker process of its own, against paging the same store through
 * GET /public/v1/orders (100 a page, the largest) in the same run: orders per second, CPU per thousand orders (the
 * worker's; the API's for the pages) and the worker's peak RSS, whose goal is 200 MB whatever the store's size.
 */

const RSS_GOAL_MIB = 200;
const POLL_MS = 200;

interface ExportBody {
  id: string;
  status: string;
  objectCount: number | null;
  bytes: number | null;
  error: string | null;
}

async function api<T>(ctx: BenchContext, token: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${ctx.api.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

export async function benchExport(ctx: BenchContext): Promise<ModuleResult> {
  const token = ctx.deepTenants[0].token;
  const orders = ctx.dataset.deep.orders;
  const notes: string[] = [];

  // The REST list, page after page, one client: what a partner does today.
  const apiCpu0 = ctx.api.cpuSeconds();
  const pagedFrom = performance.now();
  let paged = 0;
  let cursor: string | null = null;
  do {
    const page: { data: unknown[]; pagination: { nextCursor: string | null } } = await api(
      ctx,
      token,
      "GET",
      `/public/v1/orders?limit=100${cursor ? `&cursor=${cursor}` : ""}`,
    );
    paged += page.data.length;
    cursor = page.pagination.nextCursor;
  } while (cursor);
  const pagedSeconds = (performance.now() - pagedFrom) / 1000;
  const pagedCpu = ctx.api.cpuSeconds() - apiCpu0;
  ctx.say(`export: paging ${fmt.int(paged)} orders took ${pagedSeconds.toFixed(1)} s, API CPU ${pagedCpu.toFixed(1)} s`);

  const worker = await startService({ name: "export-worker", ...serviceCommand("worker", ctx.apiEnv), logDir: ctx.logDir, ready: /"msg":"worker started"/ });
  try {
    const cpu0 = worker.cpuSeconds();
    const from = performance.now();
    const created = await api<ExportBody>(ctx, token, "POST", "/public/v1/exports", { resource: "orders" });
    let done = created;
    while (done.status === "queued" || done.status === "running") {
      await new Promise((r) => setTimeout(r, POLL_MS));
      done = await api<ExportBody>(ctx, token, "GET", `/public/v1/exports/${created.id}`);
    }
    const seconds = (performance.now() - from) / 1000;
    const cpu = worker.cpuSeconds() - cpu0;
    const rss = worker.peakRssMiB();
    if (done.status !== "completed") notes.push(`export: ended ${done.status}: ${done.error}`);
    if (done.objectCount !== paged) notes.push(`export: ${done.objectCount} lines, the list paged ${paged}`);
    const count = done.objectCount ?? 0;
    ctx.say(
      `export: ${fmt.int(count)} orders in ${seconds.toFixed(1)} s (${fmt.int(count / seconds)}/s), worker CPU ${cpu.toFixed(1)} s, peak RSS ${rss.toFixed(0)} MiB, file ${fmt.int((done.bytes ?? 0) / 1024)} KiB`,
    );
    const perThousand = (s: number, n: number) => (n > 0 ? (s / n) * 1000 : Number.NaN);
    return {
      verdicts: [
        {
          benchmark: `Bulk export of the largest store (${fmt.int(orders)} orders): worker peak RSS`,
          figure: `${rss.toFixed(0)} MiB; ${fmt.int(count / seconds)} orders/s, ${perThousand(cpu, count).toFixed(3)} CPU s per 1,000`,
          against: `paging GET /orders (100 a page): ${fmt.int(paged / pagedSeconds)} orders/s, ${perThousand(pagedCpu, paged).toFixed(3)} API CPU s per 1,000`,
          value: rss,
          goal: `≤ ${RSS_GOAL_MIB} MiB`,
          pass: notes.length === 0 && rss <= RSS_GOAL_MIB,
        },
      ],
      measurements: [],
      notes,
    };
  } finally {
    await worker.stop();
  }
}
