import pg from "pg";
import { interleave, sideBySide, type BenchContext, type ModuleResult } from "./context.js";
import { fmt } from "./lib/report.js";

/**
 * Keyset pagination must not slow down with depth: GET /public/v1/orders?limit=20&cursor=<id> where the cursor
 * lies 500,000 orders deep in one store, against the first page of the same store, through the full stack.
 */

const DEEP_OFFSET = 500_000;
const CURSORS = 10;

export async function benchDeepPage(ctx: BenchContext): Promise<ModuleResult> {
  const client = new pg.Client({ connectionString: ctx.databaseUrl });
  await client.connect();
  let cursors: { id: string; orderNumber: number }[];
  try {
    // Rows DEEP_OFFSET .. DEEP_OFFSET+CURSORS-1 of the store, newest first: every cursor has 500,000+ rows before it.
    ({ rows: cursors } = await client.query<{ id: string; orderNumber: number }>(
      `select id, "orderNumber" from "Order" where "storeId" = $1 order by "createdAt" desc, id desc offset $2 limit $3`,
      [ctx.dataset.deep.id, DEEP_OFFSET - 1, CURSORS],
    ));
  } finally {
    await client.end();
  }
  if (cursors.length < CURSORS) throw new Error(`the deep store has fewer than ${DEEP_OFFSET + CURSORS} orders`);
  const notes: string[] = [];
  // The page after a cursor starts at the order just below it.
  const probe = await fetch(`${ctx.api.baseUrl}/public/v1/orders?limit=20&cursor=${cursors[0].id}`, {
    headers: { authorization: `Bearer ${ctx.deepTenants[0].token}` },
  });
  const page = (await probe.json()) as { data?: { orderNumber: number }[] };
  if (probe.status !== 200 || page.data?.[0]?.orderNumber !== cursors[0].orderNumber - 1) {
    notes.push(`deep page: the page after order ${cursors[0].orderNumber} answered ${probe.status} starting at ${page.data?.[0]?.orderNumber}`);
  }
  const first = interleave(ctx.deepTenants.map((t) => [{ path: "/public/v1/orders?limit=20", token: t.token }]));
  const deep = interleave(ctx.deepTenants.map((t) => cursors.map((c) => ({ path: `/public/v1/orders?limit=20&cursor=${c.id}`, token: t.token }))));
  ctx.say(`deep page: store of ${fmt.int(ctx.dataset.deep.orders)} orders, cursors after ${fmt.int(DEEP_OFFSET)} rows`);
  const results = await sideBySide(ctx, [
    { name: "first page", baseUrl: ctx.api.baseUrl, targets: first },
    { name: `page after ${fmt.int(DEEP_OFFSET)} rows`, baseUrl: ctx.api.baseUrl, targets: deep },
  ]);
  const [f, d] = [...results.values()];
  for (const [name, r] of results) ctx.say(`  ${name}: ${fmt.int(r.rps)} req/s, p50 ${fmt.ms(r.p50)}, p99 ${fmt.ms(r.p99)}, failures ${r.failures}`);
  const ratio = d.p50 / f.p50;
  return {
    verdicts: [
      {
        benchmark: `Deep page (cursor after ${fmt.int(DEEP_OFFSET)} rows of one store) latency`,
        figure: `${fmt.ratio(ratio)} (p50 ${fmt.ms(d.p50)} vs ${fmt.ms(f.p50)}; p99 ${fmt.ms(d.p99)} vs ${fmt.ms(f.p99)}; ${fmt.int(d.rps)} vs ${fmt.int(f.rps)} req/s)`,
        against: "first page of the same store",
        value: ratio,
        goal: "≤ 1.2×",
        pass: d.failures === 0 && f.failures === 0 && notes.length === 0 && ratio <= 1.2,
      },
    ],
    measurements: [...results].map(([server, r]) => ({ benchmark: "deep page", server, ...r })),
    notes,
  };
}
