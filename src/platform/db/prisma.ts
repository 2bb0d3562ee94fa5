import type pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../../generated/prisma/client.js";
import { createPool, namesStatements } from "./pool.js";
import { createLogger } from "../log.js";

export { Prisma } from "../../generated/prisma/client.js";
export type * from "../../generated/prisma/client.js";
export type Db = PrismaClient;
/** A client or an interactive-transaction client: what every write helper takes. */
export type Tx = Omit<PrismaClient, "$connect" | "$disconnect" | "$on" | "$transaction" | "$extends">;
/** Runs `fn` in one transaction that the caller chose (a request's own, or a new one): see runCommand. */
export type Transact = <T>(fn: (tx: Tx) => Promise<T>) => Promise<T>;

/**
 * Prisma's pg adapter sends every statement unnamed unless it is given a `statementNameGenerator`, so PostgreSQL
 * would plan it again on every call: for the order reads, planning took longer than running (0.6–0.9 ms a
 * statement, pg_stat_statements). Naming each distinct statement text makes it a prepared statement on each
 * connection. Statement texts are a bounded set (one per query shape: the REST routes use a few dozen); past
 * MAX_PREPARED, new ones run unnamed as before, so GraphQL clients sending endless new shapes cannot grow each
 * connection's memory on the server.
 */
const MAX_PREPARED = 500;
const statementNames = new Map<string, string>();

function statementName(text: string): string | undefined {
  let name = statementNames.get(text);
  if (name === undefined && statementNames.size < MAX_PREPARED) {
    name = `prisma_${statementNames.size}`;
    statementNames.set(text, name);
  }
  return name;
}

type StatementNameGenerator = NonNullable<NonNullable<ConstructorParameters<typeof PrismaPg>[1]>["statementNameGenerator"]>;
/** The adapter passes the name to pg as is: an empty one (past MAX_PREPARED) sends the statement unnamed. */
const nameStatement: StatementNameGenerator = (query) => statementName(query.sql) ?? "";

/**
 * Prisma over a pool of ours (see pool.ts); `$disconnect` ends that pool. Its statements are named unless the pool
 * sends none (behind PgBouncer in transaction mode). A transaction waits for its connection as long as any request
 * does (`maxWaitMs`, DB_CONNECTION_TIMEOUT_MS), not Prisma's own 2 s. Prisma 7 caches each query shape's plan itself
 * (`queryPlanCacheMaxSize`, 1000 shapes by default), so a read is compiled once per shape.
 */
export function createPrisma(pool: pg.Pool, opts: { maxWaitMs: number }): PrismaClient {
  const adapter = new PrismaPg(pool, { disposeExternalPool: true, ...(namesStatements(pool) ? { statementNameGenerator: nameStatement } : {}) });
  return new PrismaClient({ adapter, transactionOptions: { maxWait: opts.maxWaitMs } });
}

/** Prisma over a pool of its own with the default wait, for tests and tools that use no other connection. */
export function openPrisma(connectionString: string, poolSize: number): PrismaClient {
  const connectionTimeoutMs = 2000;
  return createPrisma(createPool(connectionString, { max: poolSize, connectionTimeoutMs, log: createLogger("silent") }), { maxWaitMs: connectionTimeoutMs });
}
