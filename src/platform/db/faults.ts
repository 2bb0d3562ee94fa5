/**
 * Whether an error means the database cannot serve right now, so the same request may succeed in a moment:
 * no connection free in time, a connection lost, refused or timed out, the server shutting down, starting up or
 * full, a deadlock with concurrent writes, or Prisma giving up on starting (or finishing) a transaction in time under load. Such a request answers
 * 503 with Retry-After, never 500. The errors come raw from pg and pg-pool (which give some no code, only a
 * message), as driver adapter errors, or wrapped by Prisma; all of those are looked through.
 */

/**
 * SQLSTATEs: class 08 (connection exception) by prefix, then admin_shutdown, crash_shutdown, cannot_connect_now,
 * too_many_connections, and deadlock_detected: PostgreSQL rolled the transaction back to break a lock cycle with
 * concurrent writes, and the same request run again succeeds.
 */
const SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300", "40P01"]);
const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN"]);
/** Prisma: cannot reach, timed out reaching, operation timed out, server closed the connection, pool timeout, too many connections. */
const PRISMA_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2024", "P2037"]);
/** Prisma's P2028 is every transaction API error; only its two timeouts are about load. */
const PRISMA_TRANSACTION_TIMEOUT = /Unable to start a transaction in the given time|cannot be executed on an expired transaction/;
/** The driver adapter's kinds for a lost or refused connection. */
const ADAPTER_KINDS = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout", "TooManyConnections"]);
/** pg and pg-pool errors that carry no code. */
const MESSAGES = [
  /^timeout exceeded when trying to connect/,
  /^Connection terminated/,
  /is not queryable/,
  /^timeout expired/,
  /^Cannot use a pool after calling end on the pool/,
];

function field(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null && key in value ? (value as Record<string, unknown>)[key] : undefined;
}

function transientItself(value: unknown): boolean {
  const code = field(value, "code");
  const originalCode = field(value, "originalCode");
  const kind = field(value, "kind");
  const message = field(value, "message");
  for (const c of [code, originalCode]) {
    if (typeof c !== "string") continue;
    if (SQLSTATES.has(c) || /^08[0-9A-Z]{3}$/.test(c) || SOCKET_CODES.has(c) || PRISMA_CODES.has(c)) return true;
    if (c === "P2028" && typeof message === "string" && PRISMA_TRANSACTION_TIMEOUT.test(message)) return true;
  }
  if (typeof kind === "string" && ADAPTER_KINDS.has(kind)) return true;
  return typeof message === "string" && MESSAGES.some((m) => m.test(message));
}

/** Whether `test` holds for the error, one of its causes, or what Prisma wraps: meta.driverAdapterError, whose cause is the adapter's mapping. */
function anyInChain(err: unknown, test: (value: unknown) => boolean): boolean {
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  while (queue.length > 0 && seen.size < 16) {
    const value = queue.shift();
    if (value === undefined || value === null || seen.has(value)) continue;
    seen.add(value);
    if (test(value)) return true;
    queue.push(field(value, "cause"), field(value, "driverAdapterError"), field(field(value, "meta"), "driverAdapterError"));
  }
  return false;
}

export function isTransientDatabaseError(err: unknown): boolean {
  return anyInChain(err, transientItself);
}

/** Whether PostgreSQL refused a statement with this SQLSTATE, however pg, the adapter or Prisma wrapped it. */
export function hasSqlState(err: unknown, sqlState: string): boolean {
  return anyInChain(err, (value) => field(value, "code") === sqlState || field(value, "originalCode") === sqlState);
}
