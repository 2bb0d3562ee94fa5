import pg from "pg";
import { expect, inject, it } from "vitest";
import { createTestDatabase } from "../helpers/database.js";

/**
 * The teardown check of every test database (test/helpers/published-events.ts): it reports events the published
 * webhook schemas do not describe, and only those, and still drops the database.
 */

async function withEvents(url: string, events: { type: string; data: object }[]): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const store = await c.query<{ id: string }>(
      `insert into "Store" (id, code, environment, name, slug, "updatedAt") values (gen_random_uuid(), 'CHECK', 'SANDBOX', 'Check', 'check', now()) returning id`,
    );
    for (const e of events) {
      await c.query(`insert into "Event" (id, "storeId", type, data) values (gen_random_uuid(), $1, $2, $3)`, [
        store.rows[0].id,
        e.type,
        JSON.stringify(e.data),
      ]);
    }
  } finally {
    await c.end();
  }
}

async function exists(url: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: inject("serverUrl") });
  await c.connect();
  try {
    const { rowCount } = await c.query("select 1 from pg_database where datname = $1", [new URL(url).pathname.slice(1)]);
    return rowCount === 1;
  } finally {
    await c.end();
  }
}

const valid = { type: "store.updated", data: { storeId: "0b0f4a52-1d8e-4c39-9a4f-3f5c2d6e7a81", changed: ["name"] } };

it("a database whose events all match their published schemas drops cleanly", async () => {
  const database = await createTestDatabase();
  await withEvents(database.url, [valid, { type: "webhook.test", data: { message: "hello" } }]);
  await database.drop();
  expect(await exists(database.url)).toBe(false);
});

it("an event its published schema does not describe fails the drop, which still drops the database", async () => {
  const database = await createTestDatabase();
  await withEvents(database.url, [valid, { type: "order.created", data: { orderId: "o-1", status: "PENDING" } }, { type: "order.shipped", data: {} }]);
  const failure = await database.drop().then(
    () => null,
    (e: Error) => e.message,
  );
  expect(failure).toMatch(/^2 event\(s\) do not match their published webhook schema/);
  expect(failure).toContain(`order.created`);
  expect(failure).toContain("`data.orderNumber` is required");
  expect(failure).toContain("`data.orderId` must be a uuid");
  expect(failure).toMatch(/order\.shipped \S+: no such event in the published webhooks/);
  expect(failure).not.toContain("store.updated");
  expect(await exists(database.url)).toBe(false);
});
