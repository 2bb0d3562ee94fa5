import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import { ApiError } from "../../platform/errors.js";
import { emitEvent } from "../../platform/events/outbox.js";
import type { Services } from "../../platform/services.js";
import type { Tx } from "../../platform/db/prisma.js";
import type { PartnerPrincipal } from "../../platform/auth/principal.js";
import { isScope } from "../../platform/auth/scopes.js";
import { createContext } from "../../platform/schema/context.js";
import { apiVersionOf } from "../../platform/versions.js";
import { EXPORT_PLANS } from "./documents.js";
import { EXPORT_SCOPES, EXPORT_TASK, resourceOf, type ExportResource } from "./service.js";
import { enqueueExport, holdExport, lockStoreExports, snapshotSequence } from "./sql.js";

export interface RunExportPayload {
  exportId: string;
}

export function assertRunExportPayload(payload: unknown): RunExportPayload {
  if (typeof payload === "object" && payload !== null && "exportId" in payload && typeof payload.exportId === "string") return { exportId: payload.exportId };
  throw new Error(`run_export: unexpected payload ${JSON.stringify(payload)}`);
}

/** Why an export cannot be written, told to its Application (`error`): its own access, never our internals. */
class ExportRefused extends Error {}

/**
 * The principal the export reads as: its Application on its store, with the resource's read scope, admitted by the
 * grant rule now (a grant revoked, an Application disabled or a scope withdrawn since the request refuses it).
 */
async function readerOf(services: Services, exportId: string, resource: ExportResource): Promise<PartnerPrincipal> {
  const row = await services.db.export.findUniqueOrThrow({
    where: { id: exportId },
    select: { application: { select: { clientId: true, scopes: true } }, store: { select: { code: true, environment: true } } },
  });
  const scope = EXPORT_SCOPES[resource];
  if (!row.application.scopes.filter(isScope).includes(scope)) throw new ExportRefused(`The Application no longer holds the scope ${scope}.`);
  try {
    return await services.grants.admit({
      clientId: row.application.clientId,
      storeCode: row.store.code,
      environment: row.store.environment,
      scopes: new Set([scope]),
      tokenId: `export:${exportId}`,
      expiresAt: Date.now() + services.config.EXPORT_TIMEOUT_MS,
    });
  } catch (e) {
    throw e instanceof ApiError ? new ExportRefused(e.detail) : e;
  }
}

/** What a written file came to. */
interface Written {
  objectCount: number;
  bytes: number;
  sequence: bigint;
}

/**
 * Writes the file with `writer` (the attempt's transaction on the primary): in one REPEATABLE READ transaction (on a
 * replica that has the export's request, when replicas are configured), the store's event sequence first, then the
 * resource a page at a time, each object rendered as its GET-by-id route answers it in the export's version, one JSON
 * line each, through gzip into chunks of EXPORT_CHUNK_BYTES written as they fill: memory holds a page and a chunk,
 * whatever the store's size.
 */
async function writeFile(
  services: Services,
  writer: Tx,
  exportId: string,
  storeId: string,
  resource: ExportResource,
  since: Date | null,
  version: string,
): Promise<Written> {
  const { db, config, answers } = services;
  const principal = await readerOf(services, exportId, resource);
  const apiVersion = apiVersionOf(version);
  const plan = EXPORT_PLANS[resource];
  const reader = (await services.reads.readDb(principal)) ?? db;
  let objectCount = 0;
  let bytes = 0;
  let position = 0;
  const sequence = await reader.$transaction(
    async (tx) => {
      const [{ last }] = await tx.$queryRaw<{ last: string }[]>(snapshotSequence(storeId));
      const ctx = createContext(services, principal, `export:${exportId}`, tx);
      async function* lines(): AsyncGenerator<string> {
        let cursor: string | null = null;
        do {
          const page = await plan.page(answers, ctx, cursor, since);
          objectCount += page.items.length;
          const bodies = await Promise.all(page.items.map((item) => answers.render(apiVersion, plan.operationId, item)));
          if (bodies.length) yield `${bodies.map((body) => JSON.stringify(body)).join("\n")}\n`;
          cursor = page.next;
        } while (cursor !== null);
      }
      async function chunks(source: AsyncIterable<Buffer>): Promise<void> {
        let held: Buffer[] = [];
        let size = 0;
        const flush = async () => {
          const data = Buffer.concat(held);
          held = [];
          size = 0;
          await writer.exportChunk.create({ data: { exportId, position: position++, data } });
          bytes += data.length;
        };
        for await (const piece of source) {
          held.push(piece);
          size += piece.length;
          if (size >= config.EXPORT_CHUNK_BYTES) await flush();
        }
        if (size > 0 || position === 0) await flush();
      }
      await pipeline(Readable.from(lines()), createGzip(), chunks);
      return BigInt(last);
    },
    { isolationLevel: "RepeatableRead", timeout: config.EXPORT_TIMEOUT_MS, maxWait: config.DB_CONNECTION_TIMEOUT_MS },
  );
  return { objectCount, bytes, sequence };
}

/** How long an export waits for its store's running one before its job looks again. */
const WAIT_FOR_STORE_MS = 500;

/**
 * Makes the export running unless another export of its store runs or was requested before it and waits (one at a
 * time per store, in the order requested), in a transaction that holds the store's exports. A running export is its
 * own (a rerun after a crash), so it goes on, unless an attempt holds it (a duplicated job): that one finishes it.
 */
async function claimExport(services: Services, mine: { id: string; storeId: string; createdAt: Date }): Promise<boolean> {
  return services.db.$transaction(async (tx) => {
    await tx.$queryRaw(lockStoreExports(mine.storeId));
    const held = await tx.$queryRaw<unknown[]>(holdExport(mine.id));
    if (held.length === 0) return false;
    const earlier = [{ createdAt: { lt: mine.createdAt } }, { createdAt: mine.createdAt, id: { lt: mine.id } }];
    const busy = await tx.export.count({
      where: { storeId: mine.storeId, NOT: { id: mine.id }, OR: [{ status: "running" }, { status: "queued", OR: earlier }] },
    });
    if (busy > 0) {
      // Its job ends and a new one looks again shortly: waiting here would hold a worker slot for the whole other export.
      await tx.$queryRaw(enqueueExport(EXPORT_TASK, mine.id, services.config.EXPORT_MAX_ATTEMPTS, new Date(Date.now() + WAIT_FOR_STORE_MS)));
      return false;
    }
    await tx.export.update({ where: { id: mine.id }, data: { status: "running", startedAt: new Date() } });
    return true;
  });
}

/**
 * One attempt of an export's job. The export turns running; then one transaction on the primary holds its row, writes
 * its chunks, makes it completed and emits export.completed: a crash before the commit leaves it running with no
 * chunk at all, and the job's next attempt writes the file again. The last attempt that fails makes it failed and
 * emits export.failed.
 */
export async function runExport(services: Services, exportId: string, attempt: { last: boolean }): Promise<void> {
  const { db, config, log } = services;
  const row = await db.export.findUnique({ where: { id: exportId } });
  // Removed, or ended by an attempt whose job completion was lost: nothing left to do.
  if (!row || row.status === "completed" || row.status === "failed") return;
  if (!(await claimExport(services, row))) return;
  const resource = resourceOf(row.resource);
  try {
    const written = await db.$transaction(
      async (tx) => {
        // The row stays locked until the commit: a duplicated job of this export finds it held and leaves it.
        if ((await tx.$queryRaw<unknown[]>(holdExport(exportId))).length === 0) return null;
        const file = await writeFile(services, tx, exportId, row.storeId, resource, row.updatedSince, row.apiVersion);
        const now = new Date();
        await tx.export.update({
          where: { id: exportId },
          data: {
            status: "completed",
            objectCount: file.objectCount,
            bytes: file.bytes,
            sequence: file.sequence,
            completedAt: now,
            removeAt: new Date(now.getTime() + config.EXPORT_RETENTION_HOURS * 3_600_000),
          },
        });
        await emitEvent(tx, row.storeId, "export.completed", { exportId, resource, objectCount: file.objectCount, sequence: Number(file.sequence) });
        return file;
      },
      { timeout: config.EXPORT_TIMEOUT_MS, maxWait: config.DB_CONNECTION_TIMEOUT_MS },
    );
    if (!written) return;
    log.info({ exportId, resource, objectCount: written.objectCount, bytes: written.bytes }, "export completed");
  } catch (err) {
    const refused = err instanceof ExportRefused;
    if (!attempt.last && !refused) {
      log.warn({ err, exportId }, "export attempt failed: it will run again");
      await db.export.update({ where: { id: exportId }, data: { status: "queued" } });
      throw err;
    }
    log.error({ err, exportId }, "export failed");
    const error = refused ? err.message : `The export could not be written in ${config.EXPORT_MAX_ATTEMPTS} attempts; request a new one.`;
    await db.$transaction(async (tx) => {
      const now = new Date();
      await tx.export.update({
        where: { id: exportId },
        data: { status: "failed", error, completedAt: now, removeAt: new Date(now.getTime() + config.EXPORT_RETENTION_HOURS * 3_600_000) },
      });
      await emitEvent(tx, row.storeId, "export.failed", { exportId, resource, error });
    });
  }
}
