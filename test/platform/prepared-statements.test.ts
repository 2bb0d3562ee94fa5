import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase } from "../helpers/database.js";
import { openPrisma, type Db } from "../../src/platform/db/prisma.js";

let drop: () => Promise<void>;
let url: string;
let db: Db;

beforeAll(async () => {
  ({ url, drop } = await createTestDatabase());
  // One connection, so the statements below all run in the session whose prepared statements we read.
  db = openPrisma(url, 1);
});
afterAll(async () => {
  await db.$disconnect();
  await drop();
});

describe("the service's connections", () => {
  it("prepare each Prisma statement once and reuse it", async () => {
    const read = () => db.store.findMany({ where: { code: "nope" }, select: { id: true } });
    await read();
    await read();
    const prepared = await db.$queryRawUnsafe<{ name: string; statement: string }[]>(`select name, statement from pg_prepared_statements`);
    const store = prepared.filter((p) => p.statement.includes(`FROM "public"."Store"`));
    expect(store).toHaveLength(1);
    expect(store[0].name).toMatch(/^prisma_\d+$/);
  });

  it("plan prepared statements once (generic plans)", async () => {
    const [{ plan_cache_mode: mode }] = await db.$queryRawUnsafe<{ plan_cache_mode: string }[]>(`show plan_cache_mode`);
    expect(mode).toBe("force_generic_plan");
  });
});
