import { ApiError, notFound } from "../../platform/errors.js";
import type { Db } from "../../platform/db/prisma.js";
import type { SecretBox } from "../../platform/crypto/encryption.js";
import type { PartnerPrincipal } from "../../platform/auth/principal.js";
import { isUuid } from "../../platform/uuid.js";
import { checkExportScope, checkLink, resourceOf } from "./service.js";

/** Who asks for a file: a partner token (its Application's exports on its store), or a signed link (its export). */
export type FileAccess = { principal: PartnerPrincipal } | { expires: string | null; signature: string | null };

/** A completed export's file, as served: its size and name; its content is read chunk by chunk (`readChunks`). */
export interface ExportFile {
  id: string;
  bytes: number;
  filename: string;
}

/**
 * The file an access may read: a token reads its Application's exports on its store with the resource's read scope
 * (another's is NOT_FOUND); a link reads the export it was signed for until it expires. An export not completed
 * has no file yet (409).
 */
export async function openExportFile(db: Db, box: SecretBox, id: string, access: FileAccess, now: number): Promise<ExportFile> {
  if ("expires" in access) checkLink(box, id, access.expires, access.signature, now);
  if (!isUuid(id)) throw notFound("export", id);
  const owner = "principal" in access ? { applicationId: access.principal.applicationId, storeId: access.principal.storeId } : {};
  const row = await db.export.findFirst({ where: { id, ...owner }, select: { id: true, resource: true, status: true, bytes: true, removeAt: true } });
  if (!row || (row.removeAt && row.removeAt.getTime() <= now)) throw notFound("export", id);
  const resource = resourceOf(row.resource);
  if ("principal" in access) checkExportScope(access.principal, resource);
  if (row.status !== "completed" || row.bytes === null) {
    throw new ApiError(
      "CONFLICT",
      `Export ${id} is ${row.status}: its file is there once it is completed (export.completed, or GET /public/v1/exports/${id}).`,
    );
  }
  return { id, bytes: Number(row.bytes), filename: `export-${resource}-${id}.jsonl.gz` };
}

/** The file's bytes from `start` to `end` (inclusive), a chunk at a time: memory holds one chunk whatever the file's size. */
export async function* readChunks(db: Db, id: string, start: number, end: number): AsyncGenerator<Buffer> {
  let offset = 0;
  const positions = await db.exportChunk.findMany({ where: { exportId: id }, select: { position: true }, orderBy: { position: "asc" } });
  for (const { position } of positions) {
    if (offset > end) return;
    const { data } = await db.exportChunk.findUniqueOrThrow({ where: { exportId_position: { exportId: id, position } }, select: { data: true } });
    const chunk = Buffer.from(data);
    const from = Math.max(start - offset, 0);
    const to = Math.min(end - offset + 1, chunk.length);
    if (from < to) yield chunk.subarray(from, to);
    offset += chunk.length;
  }
}
