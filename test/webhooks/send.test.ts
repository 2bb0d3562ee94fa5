import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { destroyWebhookAgents, sendWebhook } from "../../src/modules/webhooks/send.js";

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface Receiver {
  port: number;
  received: Received[];
  connections: number;
  close: () => Promise<void>;
}

const open: Receiver[] = [];

/** A real HTTP receiver on loopback; `respond` runs after the request body has been read. */
async function startReceiver(respond: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<Receiver> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      respond(req, res);
    });
  });
  const receiver: Receiver = {
    port: 0,
    received,
    connections: 0,
    close: () =>
      new Promise<void>((resolve) => {
        // Pooled keep-alive and deliberately hung connections would otherwise keep close() waiting.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server.on("connection", () => {
    receiver.connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.port = (server.address() as AddressInfo).port;
  open.push(receiver);
  return receiver;
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});

afterAll(() => {
  destroyWebhookAgents();
});

const local = (port: number, path = "/hook") => new URL(`http://127.0.0.1:${port}${path}`);
const BODY = JSON.stringify({ id: "evt_1", type: "order.created", note: "ü" });

describe("sendWebhook", () => {
  it("delivers a POST and reports 2xx as ok", async () => {
    const receiver = await startReceiver((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("thanks");
    });
    const result = await sendWebhook({
      url: local(receiver.port, "/hook?src=test"),
      address: "127.0.0.1",
      headers: { "Content-Type": "application/json", "Webhook-Signature": "t=1,v1=ab", Host: "evil.example" },
      body: BODY,
      timeoutMs: 2000,
    });
    expect(result).toMatchObject({ ok: true, status: 200, error: null, responseExcerpt: "thanks" });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(receiver.received).toHaveLength(1);
    const [req] = receiver.received;
    expect(req?.method).toBe("POST");
    expect(req?.url).toBe("/hook?src=test");
    expect(req?.body).toBe(BODY);
    expect(req?.headers["content-type"]).toBe("application/json");
    expect(req?.headers["webhook-signature"]).toBe("t=1,v1=ab");
    expect(req?.headers["content-length"]).toBe(String(Buffer.byteLength(BODY)));
    // Host always reflects the URL, never a caller-supplied value.
    expect(req?.headers.host).toBe(`127.0.0.1:${receiver.port}`);
  });

  it("treats any 2xx as ok, including an empty 204", async () => {
    const receiver = await startReceiver((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    const result = await sendWebhook({ url: local(receiver.port), address: "127.0.0.1", headers: {}, body: "{}", timeoutMs: 2000 });
    expect(result).toMatchObject({ ok: true, status: 204, error: null, responseExcerpt: null });
  });

  it("connects to the pinned address while keeping the URL's Host header", async () => {
    const receiver = await startReceiver((_req, res) => res.end("pinned"));
    const result = await sendWebhook({
      url: new URL(`http://example.invalid:${receiver.port}/pinned`),
      address: "127.0.0.1",
      headers: {},
      body: "{}",
      timeoutMs: 2000,
    });
    expect(result).toMatchObject({ ok: true, status: 200, responseExcerpt: "pinned" });
    expect(receiver.received[0]?.headers.host).toBe(`example.invalid:${receiver.port}`);
    expect(receiver.received[0]?.url).toBe("/pinned");
  });

  it("reports 500 as a failure and truncates a 1 MB body to 4096 bytes", async () => {
    const receiver = await startReceiver((_req, res) => {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end("x".repeat(1024 * 1024));
    });
    const result = await sendWebhook({ url: local(receiver.port), address: "127.0.0.1", headers: {}, body: "{}", timeoutMs: 2000 });
    expect(result.ok).toBe(false);
    expect(result.status).toBe(500);
    expect(result.error).toBe("HTTP 500");
    expect(result.responseExcerpt).toBe("x".repeat(4096));
  });

  it("stops reading an endless body once the excerpt is full and drops the connection", async () => {
    let serverSawClose: () => void = () => {};
    const closed = new Promise<void>((resolve) => {
      serverSawClose = resolve;
    });
    const receiver = await startReceiver((_req, res) => {
      res.writeHead(503);
      const pump = setInterval(() => res.write("y".repeat(1024)), 2);
      res.on("close", () => {
        clearInterval(pump);
        serverSawClose();
      });
    });
    const started = Date.now();
    const result = await sendWebhook({ url: local(receiver.port), address: "127.0.0.1", headers: {}, body: "{}", timeoutMs: 2000 });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(result).toMatchObject({ ok: false, status: 503, error: "HTTP 503", responseExcerpt: "y".repeat(4096) });
    const timedOut = Symbol("timeout");
    const winner = await Promise.race([closed, new Promise((r) => setTimeout(() => r(timedOut), 500))]);
    expect(winner).not.toBe(timedOut);
  });

  it("honours maxResponseBytes without splitting a UTF-8 character or storing NUL", async () => {
    const receiver = await startReceiver((_req, res) => {
      res.writeHead(400);
      res.end("a\u0000éééé");
    });
    const result = await sendWebhook({
      url: local(receiver.port),
      address: "127.0.0.1",
      headers: {},
      body: "{}",
      timeoutMs: 2000,
      maxResponseBytes: 5, // "a", NUL, "é" (2 bytes), half of the next "é"
    });
    expect(result).toMatchObject({ ok: false, status: 400, error: "HTTP 400", responseExcerpt: "a\uFFFDé" });
  });

  it("does not follow a 302; the redirect target receives nothing", async () => {
    const target = await startReceiver((_req, res) => res.end("should not be reached"));
    const redirector = await startReceiver((_req, res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${target.port}/stolen` });
      res.end("moved");
    });
    const result = await sendWebhook({ url: local(redirector.port), address: "127.0.0.1", headers: {}, body: "{}", timeoutMs: 2000 });
    expect(result).toMatchObject({ ok: false, status: 302, error: "redirect (302) not followed", responseExcerpt: "moved" });
    await new Promise((r) => setTimeout(r, 50));
    expect(target.received).toHaveLength(0);
    expect(target.connections).toBe(0);
    expect(redirector.received).toHaveLength(1);
  });

  it("times out a receiver that never answers, within timeout + slack", async () => {
    const receiver = await startReceiver(() => {
      /* never respond */
    });
    const started = Date.now();
    const result = await sendWebhook({ url: local(receiver.port), address: "127.0.0.1", headers: {}, body: "{}", timeoutMs: 300 });
    const wall = Date.now() - started;
    expect(result).toMatchObject({ ok: false, status: null, error: "timeout after 300ms", responseExcerpt: null });
    expect(wall).toBeGreaterThanOrEqual(290);
    expect(wall).toBeLessThan(800);
    expect(result.durationMs).toBeGreaterThanOrEqual(290);
    expect(result.durationMs).toBeLessThan(800);
  });

  it("times out a 2xx whose body never finishes (the deadline covers reading the excerpt)", async () => {
    const receiver = await startReceiver((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("partial");
    });
    const started = Date.now();
    const result = await sendWebhook({ url: local(receiver.port), address: "127.0.0.1", headers: {}, body: "{}", timeoutMs: 300 });
    expect(Date.now() - started).toBeLessThan(800);
    expect(result).toMatchObject({ ok: false, status: 200, error: "timeout after 300ms", responseExcerpt: "partial" });
  });

  it("reports connection refused", async () => {
    const receiver = await startReceiver((_req, res) => res.end());
    const port = receiver.port;
    await receiver.close();
    open.splice(open.indexOf(receiver), 1);
    const result = await sendWebhook({ url: local(port), address: "127.0.0.1", headers: {}, body: "{}", timeoutMs: 2000 });
    expect(result.ok).toBe(false);
    expect(result.status).toBeNull();
    expect(result.error).toMatch(/ECONNREFUSED/);
    expect(result.responseExcerpt).toBeNull();
  });

  it("reuses keep-alive connections, keyed by pinned address", async () => {
    const receiver = await startReceiver((_req, res) => res.end("ok"));
    const url = new URL(`http://example.invalid:${receiver.port}/`);
    for (let i = 0; i < 3; i++) {
      expect((await sendWebhook({ url, address: "127.0.0.1", headers: {}, body: "{}", timeoutMs: 2000 })).ok).toBe(true);
    }
    expect(receiver.connections).toBe(1);
    // Same host:port but a different pin must not ride the pooled socket.
    expect((await sendWebhook({ url, address: "::ffff:127.0.0.1", headers: {}, body: "{}", timeoutMs: 2000 })).ok).toBe(true);
    expect(receiver.connections).toBe(2);
  });

  it("retries once when a pooled socket was closed by the receiver", async () => {
    const perSocket = new WeakMap<object, number>();
    const receiver = await startReceiver((req, res) => {
      const n = (perSocket.get(req.socket) ?? 0) + 1;
      perSocket.set(req.socket, n);
      if (n > 1) {
        req.socket.destroy(); // receiver drops the idle connection just as we reuse it
        return;
      }
      res.end("fresh");
    });
    const url = local(receiver.port);
    expect((await sendWebhook({ url, address: "127.0.0.1", headers: {}, body: "{}", timeoutMs: 2000 })).ok).toBe(true);
    const second = await sendWebhook({ url, address: "127.0.0.1", headers: {}, body: "{}", timeoutMs: 2000 });
    expect(second).toMatchObject({ ok: true, status: 200, responseExcerpt: "fresh" });
    expect(receiver.connections).toBe(2);
  });

  it("refuses a pin that contradicts an IP-literal URL, without connecting", async () => {
    const receiver = await startReceiver((_req, res) => res.end());
    const result = await sendWebhook({ url: local(receiver.port), address: "10.0.0.5", headers: {}, body: "{}", timeoutMs: 2000 });
    expect(result).toMatchObject({ ok: false, status: null });
    expect(result.error).toMatch(/does not match/);
    expect(receiver.connections).toBe(0);
    const bad = await sendWebhook({ url: local(receiver.port), address: "not-an-ip", headers: {}, body: "{}", timeoutMs: 2000 });
    expect(bad.error).toMatch(/not an IP address/);
  });

  it("reports invalid header values as a failed attempt instead of throwing", async () => {
    const receiver = await startReceiver((_req, res) => res.end());
    const result = await sendWebhook({
      url: local(receiver.port),
      address: "127.0.0.1",
      headers: { "X-Bad": "a\r\nInjected: yes" },
      body: "{}",
      timeoutMs: 2000,
    });
    expect(result).toMatchObject({ ok: false, status: null });
    expect(result.error).toBeTruthy();
    expect(receiver.received).toHaveLength(0);
  });
});
