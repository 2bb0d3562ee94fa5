import http from "node:http";
import type { AddressInfo } from "node:net";
import { createHmac, timingSafeEqual } from "node:crypto";

/** A real webhook receiver on 127.0.0.1 for the delivery tests, and a signature verifier written from the signing rule. */

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The raw body, exactly as it arrived: signatures are checked on it before any parsing. */
  body: string;
  at: number;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Answer only after this long (to provoke timeouts). */
  delayMs?: number;
}

/** Decides the answer to the n-th request (1-based) on a path. */
export type Responder = (req: Received, n: number) => Reply | Promise<Reply>;

export interface Receiver {
  url(path: string): string;
  /** Sets how a path answers (default: 200 with an empty JSON object). */
  on(path: string, responder: Responder): void;
  requests(path: string): Received[];
  all: Received[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const all: Received[] = [];
  const responders = new Map<string, Responder>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = (req.url ?? "/").split("?")[0];
      const received: Received = { path, headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() };
      all.push(received);
      const n = all.filter((r) => r.path === path).length;
      const responder: Responder = responders.get(path) ?? (() => ({}));
      void Promise.resolve(responder(received, n)).then((reply) => {
        const send = () => {
          if (res.destroyed) return;
          res.writeHead(reply.status ?? 200, { "content-type": "application/json", ...reply.headers });
          res.end(reply.body ?? "{}");
        };
        if (reply.delayMs) setTimeout(send, reply.delayMs);
        else send();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    on: (path, responder) => void responders.set(path, responder),
    requests: (path) => all.filter((r) => r.path === path),
    all,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const TOLERANCE_SECONDS = 300;

/** Receiver-side check of `X-Service-Signature: t=<unix>,v1=<hex>[,v1=<hex>]`, independent of our signer. */
export function verifySignature(header: string | undefined, rawBody: string, secret: string, nowSeconds = Math.floor(Date.now() / 1000)): boolean {
  if (!header) return false;
  let t: number | undefined;
  const candidates: string[] = [];
  for (const part of header.split(",")) {
    const [key, value] = [part.slice(0, part.indexOf("=")), part.slice(part.indexOf("=") + 1)];
    if (key === "t" && /^\d+$/.test(value)) t = Number(value);
    else if (key === "v1") candidates.push(value);
  }
  if (t === undefined || candidates.length === 0) return false;
  if (Math.abs(nowSeconds - t) > TOLERANCE_SECONDS) return false;
  const expected = createHmac("sha256", Buffer.from(secret, "utf8")).update(`${t}.${rawBody}`, "utf8").digest();
  return candidates.some((hex) => {
    const given = Buffer.from(hex, "hex");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

export function signatureParts(header: string | undefined): { t: number; v1: string[] } {
  const parts = (header ?? "").split(",");
  return {
    t: Number(parts.find((p) => p.startsWith("t="))?.slice(2)),
    v1: parts.filter((p) => p.startsWith("v1=")).map((p) => p.slice(3)),
  };
}

/** Polls until `check` returns a truthy value; fails with `what` after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 10_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A receiver that accepts every request and never answers: each one holds its sender until the sender gives up. */
export interface SilentReceiver {
  url(path: string): string;
  /** Requests whose headers have arrived, still held. */
  held(): number;
  /** Requests that arrived in all. */
  received(): number;
  /** Drops the connections of every held request: their senders see the connection reset. */
  cut(): void;
  close(): Promise<void>;
}

export async function startSilentReceiver(): Promise<SilentReceiver> {
  let received = 0;
  const open = new Set<http.ServerResponse>();
  const server = http.createServer((_req, res) => {
    received++;
    open.add(res);
    res.on("close", () => open.delete(res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    held: () => open.size,
    received: () => received,
    cut: () => {
      for (const res of open) res.socket?.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
