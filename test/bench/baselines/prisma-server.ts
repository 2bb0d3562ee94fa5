import { openPrisma } from "../../../src/platform/db/prisma.js";
import { serveBaseline } from "./common.js";
import { prismaOrderSource } from "./prisma-queries.js";

/**
 * Baseline (b′), for information: the Prisma calls of baseline (b) on bare node:http, without the request pipeline
 * (no signature check, grant, rate limit, validation, logs or metrics). Its distance from (b) is what the pipeline
 * costs; its distance from the façade, what the pipeline and GraphQL cost together.
 */

const db = openPrisma(process.env.DATABASE_URL ?? "", Number(process.env.DB_POOL_SIZE ?? 10));

await serveBaseline(
  "baseline-prisma",
  async () => new Map((await db.store.findMany({ select: { id: true, code: true } })).map((s) => [s.code, s.id])),
  prismaOrderSource(db),
  () => db.$disconnect(),
);
