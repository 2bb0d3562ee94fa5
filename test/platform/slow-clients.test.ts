import { execFile } from "node:child_process";
import { request as httpRequest, type Server } from "node:http";
import { connect } from "node:net";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createMetricsServer } from "../../src/http/metrics.js";
import { listen } from "../../src/http/server.js";

/** Slow and oversized requests against the real server: bounded, and answered in a way clients can read. */

const HEADERS_TIMEOUT_MS = 1000;
const REQUEST_TIMEOUT_MS = 2000;
/** Node sweeps for timed-out connections every second at most, and a loaded test machine adds a little. */
const MARGIN_MS = 1500;
const TOKEN_PATH = "/partner/auth/token";
const MiB = 1024 * 1024;

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS), HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) });
});
afterAll(() => app?.close());

/**
 * Opens a raw connection, sends `head` at once and then `trickle` one byte every 100 ms, and resolves with how
 * long the server kept the connection open and what it answered. Gives up (Infinity) after `giveUpMs`.
 */
function trickle(port: number, head: string, trickleText: string, giveUpMs: number): Promise<{ heldMs: number; answer: string }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const started = Date.now();
    let answer = "";
    let sent = 0;
    const timer = setInterval(() => {
      if (sent < trickleText.length) socket.write(trickleText[sent++]);
    }, 100);
    const giveUp = setTimeout(() => socket.destroy(new Error("still open")), giveUpMs);
    socket.on("connect", () => socket.write(head));
    socket.on("data", (d: Buffer) => (answer += d.toString()));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      const heldMs = Date.now() - started;
      resolve({ heldMs: heldMs >= giveUpMs ? Infinity : heldMs, answer });
    });
  });
}

const portOf = (baseUrl: string) => Number(new URL(baseUrl).port);
const SLOW_HEADERS = "x".repeat(200);

describe("slow clients", () => {
  it("closes a connection whose headers trickle in once HTTP_HEADERS_TIMEOUT_MS has passed, not up to 30 s later", async () => {
    const { heldMs, answer } = await trickle(portOf(app.baseUrl), "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ", SLOW_HEADERS, HEADERS_TIMEOUT_MS + 5000);
    expect(heldMs).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100);
    expect(heldMs).toBeLessThan(HEADERS_TIMEOUT_MS + MARGIN_MS);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("closes a connection whose body trickles in once HTTP_REQUEST_TIMEOUT_MS has passed", async () => {
    const head = `POST ${TOKEN_PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`;
    const { heldMs, answer } = await trickle(portOf(app.baseUrl), head, "{".repeat(999), REQUEST_TIMEOUT_MS + 5000);
    expect(heldMs).toBeLessThan(REQUEST_TIMEOUT_MS + MARGIN_MS);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("holds a worker's metrics server to the same bounds", async () => {
    const server: Server = createMetricsServer(app.services.metrics, app.services, () => true);
    try {
      const port = await listen(server, 0, "127.0.0.1");
      const { heldMs } = await trickle(port, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ", SLOW_HEADERS, HEADERS_TIMEOUT_MS + 5000);
      expect(heldMs).toBeLessThan(HEADERS_TIMEOUT_MS + MARGIN_MS);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});

interface Answer {
  status: number;
  contentType: string | undefined;
  code: unknown;
}

async function readProblem(res: Response): Promise<Answer> {
  return { status: res.status, contentType: res.headers.get("content-type") ?? undefined, code: ((await res.json()) as { code?: unknown }).code };
}

/** Uploads pace their chunks as a network would; over loopback a body that fits the socket buffers is sent before any answer. */
const CHUNK_INTERVAL_MS = 2;
const pause = () => new Promise((r) => setTimeout(r, CHUNK_INTERVAL_MS));

/**
 * node:http `request`, writing `total` bytes in paced 64 KiB chunks as a plain client would (with a declared length, or
 * chunked). Settles once the upload has ended one way or the other, with the answer and any error the client saw.
 */
function postInChunks(total: number, declareLength: boolean): Promise<{ answer: Answer | null; error: string | null }> {
  return new Promise((resolve) => {
    let answer: Answer | null = null;
    let error: string | null = null;
    const headers: Record<string, string> = { "content-type": "application/json", ...(declareLength ? { "content-length": String(total) } : {}) };
    const req = httpRequest(new URL(TOKEN_PATH, app.baseUrl), { method: "POST", headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.on(
        "end",
        () => (answer = { status: res.statusCode ?? 0, contentType: res.headers["content-type"], code: (JSON.parse(text) as { code?: unknown }).code }),
      );
    });
    req.on("error", (e: NodeJS.ErrnoException) => (error ??= e.code ?? e.message));
    req.on("close", () => setImmediate(() => resolve({ answer, error })));
    const chunk = Buffer.alloc(64 * 1024, "x");
    void (async () => {
      for (let written = 0; written < total && !req.destroyed; written += chunk.length) {
        if (!req.write(chunk)) await new Promise((r) => req.once("drain", r));
        await pause();
      }
      req.end();
    })();
  });
}

function streamOf(total: number): ReadableStream<Uint8Array> {
  const chunk = new Uint8Array(64 * 1024).fill(0x79);
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      await pause();
      if (sent >= total) return controller.close();
      sent += chunk.length;
      controller.enqueue(chunk);
    },
  });
}

/** The token endpoint answers its errors as OAuth 2.0 error responses, application/json with the problem's fields. */
const expect413 = (answer: Answer) => expect(answer).toEqual({ status: 413, contentType: "application/json", code: "PAYLOAD_TOO_LARGE" });

describe("bodies over 1 MiB", () => {
  it.each([2 * MiB, 5 * MiB])("fetch reads the 413 problem for a %i-byte body with a declared length, with no EPIPE", async (size) => {
    const res = await fetch(`${app.baseUrl}${TOKEN_PATH}`, { method: "POST", headers: { "content-type": "application/json" }, body: Buffer.alloc(size, "x") });
    expect413(await readProblem(res));
  });

  it.each([2 * MiB, 5 * MiB])("fetch reads the 413 problem for a %i-byte body streamed in chunks", async (size) => {
    const init: RequestInit & { duplex: "half" } = { method: "POST", headers: { "content-type": "application/json" }, body: streamOf(size), duplex: "half" };
    expect413(await readProblem(await fetch(`${app.baseUrl}${TOKEN_PATH}`, init)));
  });

  it.each([
    [2 * MiB, false],
    [5 * MiB, false],
    [5 * MiB, true],
  ])("node:http request reads the 413 problem for a %i-byte body written in chunks (declared length: %s), with no EPIPE", async (size, declared) => {
    const { answer, error } = await postInChunks(size, declared);
    expect(error).toBeNull();
    expect413(answer ?? { status: 0, contentType: undefined, code: null });
  });

  describe("curl, uploading 5 MiB", () => {
    let dir = "";
    let file = "";
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), "body-"));
      file = join(dir, "big.json");
      await writeFile(file, Buffer.alloc(5 * MiB, "x"));
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));

    /** curl's answer and how many bytes of the body it uploaded. */
    async function curl(args: string[]): Promise<{ status: string; code: unknown; uploaded: number }> {
      const out = await promisify(execFile)("curl", [
        "-sS",
        ...args,
        "-H",
        "content-type: application/json",
        "--data-binary",
        `@${file}`,
        "-w",
        "\n%{http_code} %{size_upload}",
        `${app.baseUrl}${TOKEN_PATH}`,
      ]);
      const [body, stats] = out.stdout.split("\n");
      const [status, uploaded] = stats.split(" ");
      return { status, code: (JSON.parse(body) as { code?: unknown }).code, uploaded: Number(uploaded) };
    }

    it("reads the 413 problem without uploading the body when it asks for 100 Continue first (its default)", async () => {
      expect(await curl([])).toEqual({ status: "413", code: "PAYLOAD_TOO_LARGE", uploaded: 0 });
    });

    it("reads the 413 problem after a paced upload without Expect", async () => {
      expect(await curl(["--limit-rate", "32M", "-H", "Expect:"])).toEqual({ status: "413", code: "PAYLOAD_TOO_LARGE", uploaded: 5 * MiB });
    });
  });

  it.each([2 * MiB, 5 * MiB])(
    "a client that sends the whole %i-byte body before it reads (as Python's http.client does) reads the 413, with no EPIPE",
    async (size) => {
      const result = await new Promise<{ answer: string; error: string | null }>((resolve) => {
        // allowHalfOpen: it keeps sending after the server's FIN, as such clients do.
        const socket = connect({ port: portOf(app.baseUrl), host: "127.0.0.1", allowHalfOpen: true });
        let answer = "";
        let error: string | null = null;
        socket.on("data", (d: Buffer) => (answer += d.toString()));
        socket.on("error", (e: NodeJS.ErrnoException) => (error ??= e.code ?? e.message));
        socket.on("close", () => resolve({ answer, error }));
        const chunk = Buffer.alloc(64 * 1024, "x");
        void (async () => {
          socket.write(`POST ${TOKEN_PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\nConnection: close\r\n\r\n`);
          for (let written = 0; written < size && !socket.destroyed; written += chunk.length) {
            if (!socket.write(chunk)) await new Promise((r) => socket.once("drain", r));
            await pause();
          }
          socket.end();
        })();
      });
      expect(result.error).toBeNull();
      expect(result.answer).toMatch(/^HTTP\/1\.1 413 [\s\S]*"code":"PAYLOAD_TOO_LARGE"/);
    },
  );

  it("still answers the next request on the same connection once the refused body has been read", async () => {
    const answers = await new Promise<string>((resolve, reject) => {
      const socket = connect(portOf(app.baseUrl), "127.0.0.1");
      let text = "";
      socket.on("data", (d: Buffer) => {
        text += d.toString();
        if (text.includes('"status":"ok"')) socket.end();
      });
      socket.on("close", () => resolve(text));
      socket.on("error", reject);
      const size = 2 * MiB;
      socket.write(`POST ${TOKEN_PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`);
      socket.write(Buffer.alloc(size, "x"));
      socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    });
    expect(answers).toMatch(/^HTTP\/1\.1 413 [\s\S]*HTTP\/1\.1 200 /);
  });

  it.each([
    ["declares", `Content-Length: ${200 * MiB}`],
    ["streams", "Transfer-Encoding: chunked"],
  ])("cuts a connection that %s a body far beyond the limit, after answering 413", async (_, framing) => {
    const result = await new Promise<{ answer: string; sent: number }>((resolve) => {
      const socket = connect(portOf(app.baseUrl), "127.0.0.1");
      let answer = "";
      let sent = 0;
      const data = Buffer.alloc(256 * 1024, "x");
      const chunk = framing.startsWith("Transfer") ? Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from("\r\n")]) : data;
      const pump = () => {
        while (!socket.destroyed && sent < 200 * MiB) {
          sent += data.length;
          if (!socket.write(chunk)) return void socket.once("drain", pump);
        }
      };
      socket.on("connect", () => {
        socket.write(`POST ${TOKEN_PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`);
        pump();
      });
      socket.on("data", (d: Buffer) => (answer += d.toString()));
      socket.on("error", () => undefined);
      socket.on("close", () => resolve({ answer, sent }));
    });
    expect(result.answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(result.sent).toBeLessThan(200 * MiB);
  });
});
