import type { IncomingMessage } from "node:http";
import { ApiError, invalidRequest } from "../errors.js";
import { nestsDeeperThan } from "../input.js";

export const MAX_BODY_BYTES = 1024 * 1024;
/** A refused body is still read and dropped up to this size in all, and for this long, before the 413 goes out. */
export const DRAIN_MAX_BYTES = 8 * MAX_BODY_BYTES;
export const DRAIN_TIMEOUT_MS = 5_000;

/** Whether the request declares a body over the limit; such a body is refused without being invited by 100 Continue. */
export function declaresTooLarge(req: IncomingMessage, limit = MAX_BODY_BYTES): boolean {
  return Number(req.headers["content-length"]) > limit;
}

/** Reads the raw body, refusing more than 1 MiB (413 PAYLOAD_TOO_LARGE) without buffering the excess. */
async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<string> {
  if (declaresTooLarge(req, limit)) {
    // A client waiting for 100 Continue sends nothing until it gets an answer: give it one at once.
    const waiting = /100-continue/i.test(req.headers.expect ?? "");
    throw await refuse(req, limit, 0, waiting ? "awaiting-continue" : Number(req.headers["content-length"]) <= DRAIN_MAX_BYTES ? "drainable" : "too-long");
  }
  // Events rather than `for await`: leaving that loop early destroys the request, and its socket with it.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      stop();
      void refuse(req, limit, size, "drainable").then(reject);
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks).toString("utf8"));
    };
    const onError = (err: Error) => {
      stop();
      reject(err);
    };
    const stop = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  });
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

/** How long a connection whose refused body is still arriving stays open, reading, after its 413 went out. */
export const LINGER_MS = 1_000;

/**
 * The 413 for a body over the limit, made once the rest of the body has been read and dropped. Clients are usually
 * still sending: answering and closing with their data unread makes the kernel reset the connection, and they see
 * EPIPE or ECONNRESET instead of the answer. A body too long to drain (declared longer than DRAIN_MAX_BYTES, or
 * running past it or DRAIN_TIMEOUT_MS) is answered at once, and its connection closed only after a lingering read
 * (as nginx does) so the answer reaches the client before the reset. A client awaiting 100 Continue has sent no
 * body: its connection closes with the answer.
 */
async function refuse(req: IncomingMessage, limit: number, received: number, body: "drainable" | "too-long" | "awaiting-continue"): Promise<ApiError> {
  const drained = body === "drainable" && (await discardRest(req, received));
  if (!drained && body !== "awaiting-continue") lingerThenClose(req);
  return new ApiError(
    "PAYLOAD_TOO_LARGE",
    `Request bodies are limited to ${limit} bytes.`,
    undefined,
    body === "awaiting-continue" ? { connection: "close" } : undefined,
  );
}

/**
 * Keeps reading (and dropping) the refused body for LINGER_MS, at most DRAIN_MAX_BYTES more (past that the request
 * is paused, so TCP flow control holds the client back), then closes the connection; a body that ends meanwhile
 * leaves the connection open for the next request.
 */
function lingerThenClose(req: IncomingMessage): void {
  let read = 0;
  const onData = (chunk: Buffer) => {
    read += chunk.length;
    if (read > DRAIN_MAX_BYTES) req.pause();
  };
  const timer = setTimeout(() => req.socket.destroy(), LINGER_MS);
  const stop = () => {
    clearTimeout(timer);
    req.off("data", onData);
  };
  req.on("data", onData);
  req.once("end", stop);
  req.socket.once("close", stop);
}

/** Drops the rest of the body; true once it has ended within the drain bounds. */
function discardRest(req: IncomingMessage, received: number): Promise<boolean> {
  if (req.complete) return Promise.resolve(true);
  return new Promise((resolve) => {
    let total = received;
    const done = (drained: boolean) => {
      clearTimeout(timer);
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("close", onClose);
      resolve(drained);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total > DRAIN_MAX_BYTES) done(false);
    };
    const onEnd = () => done(true);
    const onClose = () => done(false);
    const timer = setTimeout(onClose, DRAIN_TIMEOUT_MS);
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("close", onClose);
  });
}

export function mediaType(req: IncomingMessage): string {
  return (req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
}

export const FORM_MEDIA_TYPE = "application/x-www-form-urlencoded";

/** JSON is `application/json` or a `+json` type; a body without a Content-Type is read as JSON too. */
const isJson = (type: string): boolean => type === "" || type === "application/json" || type.endsWith("+json");

/** JSON nested past the limit, refused naming it; `field` is what the text was sent as (`body`, `variables`). */
export function checkJsonDepth(raw: string, maxDepth: number, field = "body"): void {
  if (!nestsDeeperThan(raw, maxDepth)) return;
  throw invalidRequest(`JSON nested deeper than ${maxDepth} levels (arrays and objects within one another) is not accepted.`, [
    { field, code: "TOO_DEEP", message: `\`${field}\` nests arrays and objects deeper than ${maxDepth} levels` },
  ]);
}

/** Strict JSON no deeper than `maxDepth`: an empty body is `undefined`; anything unparsable is 400. */
export function parseJson(raw: string, maxDepth: number): unknown {
  if (raw.trim() === "") return undefined;
  checkJsonDepth(raw, maxDepth);
  try {
    return JSON.parse(raw);
  } catch (e) {
    throw invalidRequest(`The body is not valid JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** A body sent where JSON is expected: in another media type it is 415, whatever it holds. */
export function checkJsonMediaType(req: IncomingMessage, raw: string): void {
  const type = mediaType(req);
  if (raw.trim() === "" || isJson(type)) return;
  // curl -d sends its data as a form unless told otherwise, a new user's usual first request.
  const hint = type === FORM_MEDIA_TYPE ? " (curl -d sends that unless you add -H 'content-type: application/json')" : "";
  throw new ApiError("UNSUPPORTED_MEDIA_TYPE", `Send the body as JSON with Content-Type: application/json; it came as ${type}${hint}.`);
}

/** A request body where JSON is expected (checkJsonMediaType, then parseJson). */
export function parseJsonBody(req: IncomingMessage, raw: string, maxDepth: number): unknown {
  checkJsonMediaType(req, raw);
  return parseJson(raw, maxDepth);
}
