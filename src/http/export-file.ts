import { once } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiError } from "../platform/errors.js";
import type { Services } from "../platform/services.js";
import { type ExportFile, readChunks } from "../modules/exports/file.js";

/**
 * The byte range a `Range` header asks of a file of `size` bytes: one range (`bytes=a-b`, `bytes=a-`, `bytes=-n`), or
 * the whole file without one. A range past the end is 416; several ranges are answered with the whole file.
 */
function rangeOf(header: string | undefined, size: number): { start: number; end: number; partial: boolean } {
  const whole = { start: 0, end: size - 1, partial: false };
  const m = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!m || (m[1] === "" && m[2] === "")) return whole;
  const start = m[1] === "" ? Math.max(size - Number(m[2]), 0) : Number(m[1]);
  const end = m[1] === "" || m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || start > end) {
    throw new ApiError("INVALID_REQUEST", `The range ${header} is outside the file's ${size} bytes.`, undefined, { "content-range": `bytes */${size}` });
  }
  return { start, end, partial: true };
}

/**
 * Streams an export's gzip file (opened and checked by the caller): Content-Length, range requests, and the chunks
 * written as the client takes them.
 */
export async function sendExportFile(services: Services, req: IncomingMessage, res: ServerResponse, file: ExportFile): Promise<void> {
  const { start, end, partial } = rangeOf(typeof req.headers.range === "string" ? req.headers.range : undefined, file.bytes);
  const headers: Record<string, string> = {
    "content-type": "application/gzip",
    "content-length": String(end - start + 1),
    "accept-ranges": "bytes",
    "content-disposition": `attachment; filename="${file.filename}"`,
    "cache-control": "private, no-store",
  };
  if (partial) headers["content-range"] = `bytes ${start}-${end}/${file.bytes}`;
  res.writeHead(partial ? 206 : 200, headers);
  if (req.method === "HEAD") return void res.end();
  for await (const piece of readChunks(services.db, file.id, start, end)) {
    if (res.destroyed) return;
    if (!res.write(piece)) await once(res, "drain");
  }
  res.end();
}
