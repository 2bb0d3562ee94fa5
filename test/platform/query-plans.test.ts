import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase } from "../helpers/database.js";
import { createOrder } from "../helpers/fixtures.js";
import { openPrisma, type Db, type Prisma } from "../../src/platform/db/prisma.js";
import { createStore } from "../../src/modules/admin/operations.js";

let drop: () => Promise<void>;
let db: Db;
const stores: { id: string; orderIds: string[] }[] = [];

beforeAll(async () => {
  let url: string;
  ({ url, drop } = await createTestDatabase());
  db = openPrisma(url, 2);
  for (const name of ["Plan A", "Plan B", "Plan C"]) {
    const store = await createStore(db, { name, environment: "PRODUCTION" });
    const orderIds = [];
    for (let i = 0; i < 3; i++) orderIds.push((await createOrder(db, store.id, { createdAt: new Date(Date.UTC(2026, 0, 1 + i)) })).id);
    stores.push({ id: store.id, orderIds });
  }
});
afterAll(async () => {
  await db.$disconnect();
  await drop();
});

const include = {
  customer: true,
  items: { orderBy: [{ position: "asc" }, { id: "asc" }], include: { additionals: { orderBy: [{ name: "asc" }, { id: "asc" }] } } },
  payments: { orderBy: { id: "asc" } },
} satisfies Prisma.OrderInclude;

/** The same shape every call, as a REST route sends it: only the store and the cursor change. */
const page = (storeId: string, after?: string) =>
  db.order.findMany({
    relationLoadStrategy: "join",
    where: { storeId },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: 2,
    ...(after ? { cursor: { id: after }, skip: 1 } : {}),
    include,
  });

/** What PostgreSQL says the page is, without Prisma. */
async function expectedPage(storeId: string, after?: string): Promise<string[]> {
  const rows = await db.$queryRawUnsafe<{ id: string }[]>(
    `select id from "Order" where "storeId" = $1::uuid
       and ($2::uuid is null or ("createdAt", id) < (select "createdAt", id from "Order" where id = $2::uuid))
     order by "createdAt" desc, id desc limit 2`,
    storeId,
    after ?? null,
  );
  return rows.map((r) => r.id);
}

/**
 * Prisma 7 compiles each query shape once and fills the plan with each call's values (its query-plan cache). These
 * reads repeat shapes with other values, and each answer must be that call's: what PostgreSQL answers without
 * Prisma, or what the values say. (The cache is Prisma's own, with no public counters, so only answers are checked.)
 */
describe("Prisma's query plans", () => {
  it("answers every call of a read's shape with that call's values", async () => {
    const pages: { storeId: string; after?: string; ids: string[] }[] = [];
    for (const round of [0, 1]) {
      for (const store of stores) {
        const first = await page(store.id);
        pages.push({ storeId: store.id, ids: first.map((o) => o.id) });
        expect(first.every((o) => o.storeId === store.id && o.items.length === 2 && o.items[0].additionals.length === 1)).toBe(true);
        const second = await page(store.id, first[1].id);
        pages.push({ storeId: store.id, after: first[1].id, ids: second.map((o) => o.id) });
        if (round === 1) expect(second.map((o) => o.storeId)).toEqual([store.id]);
      }
    }
    for (const p of pages) expect(p.ids).toEqual(await expectedPage(p.storeId, p.after));
  });

  it("finds one order by id and store, and nothing for another store's order", async () => {
    const [a, b] = stores;
    const find = (storeId: string, id: string) => db.order.findFirst({ where: { id, storeId }, include: { statusHistory: true } });
    expect((await find(a.id, a.orderIds[0]))?.id).toBe(a.orderIds[0]);
    expect((await find(b.id, b.orderIds[2]))?.id).toBe(b.orderIds[2]);
    expect(await find(b.id, a.orderIds[0])).toBeNull();
    expect((await find(a.id, a.orderIds[1]))?.storeId).toBe(a.id);
  });

  it("compares an Int column with each call's number", async () => {
    const numbered = (storeId: string, n: number) => db.order.findMany({ where: { storeId, orderNumber: { gt: n } }, select: { orderNumber: true } });
    const [low, middle, high] = (await db.order.findMany({ where: { storeId: stores[1].id }, select: { orderNumber: true } }))
      .map((o) => o.orderNumber)
      .sort((x, y) => x - y);
    expect((await numbered(stores[1].id, low)).map((o) => o.orderNumber).sort((x, y) => x - y)).toEqual([middle, high]);
    expect((await numbered(stores[1].id, middle)).map((o) => o.orderNumber)).toEqual([high]);
  });

  it("answers each call of a JSON path filter correctly", async () => {
    const [a, b] = stores;
    const orders = await db.order.findMany({ where: { storeId: { in: [a.id, b.id] } }, select: { id: true, storeId: true, deliveryAddress: true } });
    for (const o of orders.slice(0, 3)) {
      const city = (o.deliveryAddress as { city: string }).city;
      const found = await db.order.findMany({
        where: { storeId: o.storeId, deliveryAddress: { path: ["city"], string_contains: city } },
        select: { id: true },
      });
      expect(found.map((f) => f.id)).toContain(o.id);
    }
    expect(await db.order.count({ where: { storeId: a.id, deliveryAddress: { path: ["city"], equals: "Nowhere at all" } } })).toBe(0);
  });

  it("keeps Prisma's own error for an unknown enum value, and answers each known one", async () => {
    const bogus = () => db.order.findMany({ where: { storeId: stores[0].id, status: "BOGUS" as never } });
    await expect(bogus()).rejects.toThrow(/Invalid value for argument `status`/);
    await expect(bogus()).rejects.toThrow(/Invalid value for argument `status`/);
    expect((await db.order.findMany({ where: { storeId: stores[0].id, status: "PENDING" } })).length).toBe(3);
    expect((await db.order.findMany({ where: { storeId: stores[0].id, status: "DELIVERED" } })).length).toBe(0);
  });

  it("answers each call of a raw statement with its own parameters", async () => {
    const count = (storeId: string, above: number) =>
      db.$queryRaw<{ n: number }[]>`select count(*)::int as n from "Order" where "storeId" = ${storeId}::uuid and "orderNumber" > ${above}::bigint`;
    const answers = [];
    for (const store of stores) answers.push((await count(store.id, 0))[0].n, (await count(store.id, 2 ** 40))[0].n);
    // Each store has three orders; no order number is above 2^40 (a bigint parameter).
    expect(answers).toEqual([3, 0, 3, 0, 3, 0]);
  });
});
