import type { IncomingMessage } from "node:http";
import { ApiError, invalidRequest } from "../errors.js";

export const MAX_BODY_BYTES = 1024 * 1024;

/** Reads the raw body, refusing more than 1 MiB (DECISIONS §10) without buffering the excess. */
async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<string> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      req.resume();
      throw tooLarge(limit);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

const received = new WeakMap<IncomingMessage, Promise<string>>();

/**
 * The request's body as readBody reads it, read once: the server reads it before admitting the request (a slow
 * upload must not hold one of the few slots of requests that use the database), the handler gets the same text.
 */
export function requestBody(req: IncomingMessage): Promise<string> {
  let body = received.get(req);
  if (!body) {
    body = readBody(req);
    received.set(req, body);
  }
  return body;
}

/** The rest of the body is not read: the connection closes after the 413 instead of carrying it. */
function tooLarge(limit: number): ApiError {
  return new ApiError("PAYLOAD_TOO_LARGE", `Request bodies are limited to ${limit} bytes.`, undefined, { connection: "close" });
}

export function mediaType(req: IncomingMessage): string {
  return (req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
}

/** Strict JSON: an empty body is `undefined`; anything unparsable is 400. */
export function parseJson(raw: string): unknown {
  if (raw.trim() === "") return undefined;
  try {
    return JSON.parse(raw);
  } catch (e) {
    throw invalidRequest(`The body is not valid JSON: ${(e as Error).message}`);
  }
}

export function parseBody(req: IncomingMessage, raw: string): unknown {
  const type = mediaType(req);
  if (type === "application/x-www-form-urlencoded") return Object.fromEntries(new URLSearchParams(raw));
  if (raw.trim() !== "" && type !== "" && type !== "application/json" && !type.endsWith("+json")) {
    throw new ApiError("UNSUPPORTED_MEDIA_TYPE", `Send the body as application/json (got ${type}).`);
  }
  return parseJson(raw);
}
