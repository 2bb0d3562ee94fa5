import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase } from "../helpers/database.js";
import { createPrisma, type Db } from "../../src/db/prisma.js";
import { createPool } from "../../src/db/pool.js";

let drop: () => Promise<void>;
let url: string;
let db: Db;

beforeAll(async () => {
  ({ url, drop } = await createTestDatabase());
  // One connection, so the statements below all run in the session whose prepared statements we read.
  db = createPrisma(url, 1);
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

  it("plan prepared statements once (generic plans), on the Prisma and the raw pool alike", async () => {
    const [{ plan_cache_mode: prismaMode }] = await db.$queryRawUnsafe<{ plan_cache_mode: string }[]>(`show plan_cache_mode`);
    expect(prismaMode).toBe("force_generic_plan");
    const pool = createPool(url, 1);
    try {
      const { rows } = await pool.query<{ plan_cache_mode: string }>(`show plan_cache_mode`);
      expect(rows[0].plan_cache_mode).toBe("force_generic_plan");
    } finally {
      await pool.end();
    }
  });
});
