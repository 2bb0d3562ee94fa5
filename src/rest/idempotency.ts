import { createHash } from "node:crypto";
import type { Db, IdempotencyKey, Tx } from "../platform/db/prisma.js";
import { hasSqlState } from "../platform/db/faults.js";
import { ApiError, ERROR_CATALOG, invalidRequest, type ErrorCode, type Violation } from "../platform/errors.js";
import { COMMIT_SPAN, COMMIT_SPAN_OPTIONS, LONGEST_COMMAND_MS } from "../platform/schema/commands.js";
import { tracer } from "../platform/tracing/tracer.js";
import type { RouteMiddleware, RouteNext } from "./router.js";
import { acceptsIdempotencyKey, type RouteResult } from "../platform/route.js";
import { claimIdempotencyKey, completeIdempotencyKey } from "./sql.js";

/**
 * Idempotency-Key on POST, PUT and PATCH. The record of a write commits in the write's own transaction, so
 * after a crash either both exist (a retry replays) or neither (a retry runs once).
 */

const RETENTION_MS = 24 * 60 * 60 * 1000;
const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;
/** How long a duplicate waits for the first request to finish before answering 409 CONFLICT. */
const WAIT_MS = 10_000;
/**
 * A record committed IN_PROGRESS on its own (by an operation that calls out over the network, see
 * `separately`) and this old belongs to a process that died mid-request; it may be claimed again.
 */
const ABANDONED_MS = 60_000;
/** lock_not_available: the claim waited its whole lock_timeout for another transaction holding the key. */
const LOCK_TIMEOUT = "55P03";

/**
 * Key order does not change a JSON body's meaning, so it must not change its fingerprint. Recursive: the body was
 * held to JSON_MAX_DEPTH (at most 512) before it was parsed.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

interface Recorded {
  /** A successful response, replayed as is. */
  result?: RouteResult;
  /** A business error (4xx) the operation answered, rethrown on replay so its problem gets the new requestId. */
  error?: { code: ErrorCode; detail: string; violations?: Violation[] };
}

interface Key {
  applicationId: string;
  storeId: string;
  key: string;
  fingerprint: string;
}

/** What one attempt at a keyed request came to: it ran (and recorded its answer), or it found another's record. */
type Outcome = { ran: Recorded } | { found: IdempotencyKey | null };

/** Errors that mean the operation did not run to a decision: never recorded, so a retry with the key runs it. */
function recordable(e: unknown): e is ApiError {
  return e instanceof ApiError && e.status < 500 && ![401, 403, 429].includes(e.status);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function stillRunning(): ApiError {
  return new ApiError("CONFLICT", "A request with this Idempotency-Key is still being processed. Retry shortly with the same key.", undefined, {
    "retry-after": "1",
  });
}

const expiry = () => new Date(Date.now() + RETENTION_MS);
const errorRecord = (e: ApiError): Recorded => ({ error: { code: e.code, detail: e.detail, violations: e.violations } });
const keyWhere = (k: Key) => ({ applicationId: k.applicationId, storeId: k.storeId, key: k.key });
const findRecord = (db: Tx, k: Key) => db.idempotencyKey.findUnique({ where: { applicationId_storeId_key: keyWhere(k) } });

/** The record's columns for an answer. */
function completed(recorded: Recorded, defaultStatus: number) {
  return {
    responseStatus: recorded.error ? ERROR_CATALOG[recorded.error.code].status : (recorded.result?.status ?? defaultStatus),
    responseHeaders: recorded.result?.headers ?? {},
    responseBody: JSON.stringify(recorded),
  };
}

/** Inserts the key's record IN_PROGRESS unless there is one, waiting at most `waitMs` for a concurrent insert; true if this call inserted it. */
async function claim(db: Tx, k: Key, waitMs: number): Promise<boolean> {
  const rows = await db.$queryRaw<unknown[]>(claimIdempotencyKey(k, expiry(), waitMs));
  return rows.length === 1;
}

/**
 * The usual path: one transaction claims the key, runs the operation (whose commands join the transaction),
 * re-reads its result and marks the record COMPLETED with the answer. A business error rolls all of that back;
 * the error is then recorded on its own (nothing else was written).
 */
async function together(db: Db, k: Key, next: RouteNext, deadline: number, defaultStatus: number): Promise<Outcome> {
  let claimed = false;
  try {
    const transaction = () =>
      db.$transaction(
        async (tx): Promise<Outcome> => {
          if (!(await claim(tx, k, deadline - Date.now()))) return { found: await findRecord(tx, k) };
          claimed = true;
          const recorded: Recorded = { result: await next(tx) };
          await tx.$executeRaw(completeIdempotencyKey(k, completed(recorded, defaultStatus)));
          return { ran: recorded };
        },
        // The claim's wait, then the longest operation.
        { timeout: Math.max(0, deadline - Date.now()) + LONGEST_COMMAND_MS },
      );
    // The operation's commands join this transaction: its span is theirs (see runCommand).
    return await tracer.trace(COMMIT_SPAN, COMMIT_SPAN_OPTIONS, transaction);
  } catch (e) {
    if (!claimed && hasSqlState(e, LOCK_TIMEOUT)) throw stillRunning();
    if (!claimed || !recordable(e)) throw e;
    const recorded = errorRecord(e);
    // A duplicate may have claimed the key since the rollback and runs on its own: it keeps its own answer.
    await db.idempotencyKey.createMany({
      data: [{ ...k, state: "COMPLETED", ...completed(recorded, defaultStatus), expiresAt: expiry() }],
      skipDuplicates: true,
    });
    return { ran: recorded };
  }
}

/**
 * For an operation that calls out over the network (a webhook test waits up to WEBHOOK_TIMEOUT_MS for the
 * receiver): no transaction may stay open across that call, so the claim commits on its own, the operation
 * commits its own writes, and the record is completed afterwards. A crash in between leaves the record
 * IN_PROGRESS until ABANDONED_MS, after which a retry runs the operation again.
 */
async function separately(db: Db, k: Key, next: RouteNext, deadline: number, defaultStatus: number): Promise<Outcome> {
  const claimed = await claim(db, k, deadline - Date.now()).catch((e: unknown) => {
    throw hasSqlState(e, LOCK_TIMEOUT) ? stillRunning() : e;
  });
  if (!claimed) return { found: await findRecord(db, k) };
  let recorded: Recorded;
  try {
    recorded = { result: await next() };
  } catch (e) {
    if (!recordable(e)) {
      await db.idempotencyKey.deleteMany({ where: keyWhere(k) }).catch(() => undefined);
      throw e;
    }
    recorded = errorRecord(e);
  }
  await db.$executeRaw(completeIdempotencyKey(k, completed(recorded, defaultStatus)));
  return { ran: recorded };
}

export function idempotency(db: Db, opts: { waitMs?: number } = {}): RouteMiddleware {
  const waitMs = opts.waitMs ?? WAIT_MS;
  return async ({ route, input, req, callsOut }, next) => {
    if (!acceptsIdempotencyKey(route)) return next();
    const header = req.headers["idempotency-key"];
    if (header === undefined) return next();
    const key = Array.isArray(header) ? header[0] : header;
    if (!KEY_FORMAT.test(key)) {
      throw invalidRequest("Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID v4 is recommended).", [
        { field: "Idempotency-Key", code: "INVALID_FORMAT", message: "`Idempotency-Key` must be 1 to 255 visible ASCII characters" },
      ]);
    }
    const { applicationId, storeId } = input.principal;
    const fingerprint = createHash("sha256")
      .update(`${route.method} ${req.url?.split("?")[0]}\n${canonicalJson(input.body)}`)
      .digest("hex");
    const k: Key = { applicationId, storeId, key, fingerprint };
    const deadline = Date.now() + waitMs;

    for (;;) {
      const outcome = await (callsOut ? separately : together)(db, k, next, deadline, route.status);
      if ("ran" in outcome) return replayable(outcome.ran, false);
      const existing = outcome.found;
      // Gone since the claim found it (the hourly cleanup): claim again.
      if (!existing) continue;
      const age = Date.now() - existing.createdAt.getTime();
      if (existing.expiresAt.getTime() < Date.now() || (existing.state === "IN_PROGRESS" && age > ABANDONED_MS)) {
        await db.idempotencyKey.deleteMany({ where: { id: existing.id, state: existing.state, createdAt: existing.createdAt } });
        continue;
      }
      if (existing.fingerprint !== fingerprint) {
        throw new ApiError("IDEMPOTENCY_CONFLICT", "This Idempotency-Key was already used with a different request. Use a new key for a new request.");
      }
      if (existing.state === "COMPLETED") return replayable(JSON.parse(existing.responseBody ?? "{}") as Recorded, true);
      // Only a record committed on its own (see `separately`) is seen IN_PROGRESS: poll it.
      if (Date.now() > deadline) throw stillRunning();
      await sleep(50);
    }
  };
}

function replayable(recorded: Recorded, replayed: boolean): RouteResult {
  if (recorded.error) {
    const { code, detail, violations } = recorded.error;
    throw new ApiError(code, detail, violations, replayed ? { "idempotent-replayed": "true" } : undefined);
  }
  const result = recorded.result ?? {};
  return replayed ? { ...result, headers: { ...result.headers, "idempotent-replayed": "true" } } : result;
}
