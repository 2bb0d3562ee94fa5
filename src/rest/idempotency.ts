import { createHash } from "node:crypto";
import type { Db } from "../db/prisma.js";
import { ApiError, ERROR_CATALOG, invalidRequest, type ErrorCode, type Violation } from "../errors.js";
import type { RouteMiddleware } from "./router.js";
import { acceptsIdempotencyKey, type RouteResult } from "./route.js";

/** Idempotency-Key on POST, PUT and PATCH: see docs/decisions.md, Idempotency. */

const RETENTION_MS = 24 * 60 * 60 * 1000;
const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;
/** How long a duplicate waits for the first request to finish before answering 409 CONFLICT. */
const WAIT_MS = 10_000;
/** An IN_PROGRESS record this old belongs to a process that died mid-request; it may be claimed again. */
const ABANDONED_MS = 60_000;

/** Key order does not change a JSON body's meaning, so it must not change its fingerprint. */
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

/** Errors that mean the operation did not run to a decision: never recorded, so a retry with the key runs it. */
function recordable(e: ApiError): boolean {
  return e.status < 500 && ![401, 403, 429].includes(e.status);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function idempotency(db: Db): RouteMiddleware {
  return async ({ route, input, req }, next) => {
    if (!acceptsIdempotencyKey(route)) return next();
    const header = req.headers["idempotency-key"];
    if (header === undefined) return next();
    const key = Array.isArray(header) ? header[0] : header;
    if (!KEY_FORMAT.test(key)) {
      throw invalidRequest("Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID v4 is recommended).", [
        { field: "Idempotency-Key", code: "INVALID_FORMAT", message: "1..255 visible ASCII characters" },
      ]);
    }
    const { applicationId, storeId } = input.principal;
    const fingerprint = createHash("sha256")
      .update(`${route.method} ${req.url?.split("?")[0]}\n${canonicalJson(input.body)}`)
      .digest("hex");
    const where = { applicationId_storeId_key: { applicationId, storeId, key } };
    const deadline = Date.now() + WAIT_MS;

    for (;;) {
      const claimed = await db.idempotencyKey.createMany({
        data: [{ applicationId, storeId, key, fingerprint, expiresAt: new Date(Date.now() + RETENTION_MS) }],
        skipDuplicates: true,
      });
      if (claimed.count === 1) return runAndRecord();

      const existing = await db.idempotencyKey.findUnique({ where });
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
      if (Date.now() > deadline) {
        throw new ApiError("CONFLICT", "A request with this Idempotency-Key is still being processed. Retry shortly with the same key.", undefined, { "retry-after": "1" });
      }
      await sleep(50);
    }

    async function runAndRecord(): Promise<RouteResult> {
      let recorded: Recorded;
      try {
        recorded = { result: await next() };
      } catch (e) {
        if (e instanceof ApiError && recordable(e)) {
          recorded = { error: { code: e.code, detail: e.detail, violations: e.violations } };
        } else {
          await db.idempotencyKey.delete({ where }).catch(() => undefined);
          throw e;
        }
      }
      await db.idempotencyKey.update({
        where,
        data: {
          state: "COMPLETED",
          responseStatus: recorded.error ? ERROR_CATALOG[recorded.error.code].status : (recorded.result?.status ?? route.status),
          responseHeaders: recorded.result?.headers ?? {},
          responseBody: JSON.stringify(recorded),
        },
      });
      return replayable(recorded, false);
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
