import http from "node:http";
import type { AddressInfo } from "node:net";
import { timingSafeEqual } from "node:crypto";
import { computeSignature } from "../../../src/modules/webhooks/signing.js";

/**
 * A webhook receiver on 127.0.0.1 for the delivery benchmarks. It checks every delivery's X-Service-Signature
 * against the endpoint's secret on the raw body, and records when each event id first arrived
 * in epoch milliseconds with sub-millisecond resolution (performance.timeOrigin + now(), which the producer
 * process stamps its commits with too). Answers 200 at once.
 */
export interface Receiver {
  url(path: string): string;
  /** The secret of the endpoint registered for a path; deliveries to a path without one count as bad. */
  setSecret(path: string, secret: string): void;
  /** First arrival per event id. */
  firstArrival: Map<string, number>;
  duplicates: number;
  badSignatures: number;
  close(): Promise<void>;
}

function signatureValid(header: string | undefined, secret: string | undefined, body: string): boolean {
  if (!header || !secret) return false;
  const parts = header.split(",");
  const t = Number(parts.find((p) => p.startsWith("t="))?.slice(2));
  if (!Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > 300) return false;
  const expected = Buffer.from(computeSignature(secret, t, body), "hex");
  return parts
    .filter((p) => p.startsWith("v1="))
    .some((p) => {
      const given = Buffer.from(p.slice(3), "hex");
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}

export async function startReceiver(): Promise<Receiver> {
  const secrets = new Map<string, string>();
  const firstArrival = new Map<string, number>();
  const state = { duplicates: 0, badSignatures: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = performance.timeOrigin + performance.now();
      const body = Buffer.concat(chunks).toString("utf8");
      const signature = req.headers["x-service-signature"];
      if (!signatureValid(typeof signature === "string" ? signature : undefined, secrets.get(req.url ?? ""), body)) state.badSignatures++;
      const eventId = req.headers["x-service-event-id"];
      if (typeof eventId === "string") {
        if (firstArrival.has(eventId)) state.duplicates++;
        else firstArrival.set(eventId, at);
      }
      res.writeHead(200, { "content-type": "application/json", "content-length": "2" });
      res.end("{}");
    });
  });
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    setSecret: (path, secret) => secrets.set(path, secret),
    firstArrival,
    get duplicates() {
      return state.duplicates;
    },
    get badSignatures() {
      return state.badSignatures;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
