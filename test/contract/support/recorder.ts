import { createServer, request, type Server } from "node:http";
import type { Exchange } from "./validator.js";

/**
 * A pass-through proxy on 127.0.0.1 that records each exchange: the Mesh calls the REST API through it,
 * so the contract suite can check the very responses the Mesh consumed, byte for byte.
 */
export class Recorder {
  private server: Server | null = null;
  private exchanges: Exchange[] = [];
  baseUrl = "";

  constructor(private readonly target: string) {}

  async start(): Promise<void> {
    const target = new URL(this.target);
    this.server = createServer((req, res) => {
      const upstream = request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } },
        (answer) => {
          const chunks: Buffer[] = [];
          answer.on("data", (c: Buffer) => chunks.push(c));
          answer.on("end", () => {
            const body = Buffer.concat(chunks);
            const headers: Record<string, string> = {};
            for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(", ") : v;
            const url = new URL(req.url ?? "/", "http://proxy");
            this.exchanges.push({ method: req.method ?? "GET", path: url.pathname, status: answer.statusCode ?? 0, headers, body: body.toString("utf8") });
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            res.end(body);
          });
        },
      );
      upstream.on("error", (e) => {
        res.writeHead(502);
        res.end(String(e));
      });
      req.pipe(upstream);
    });
    const server = this.server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    this.baseUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  }

  /** The exchanges recorded since the last call. */
  take(): Exchange[] {
    const taken = this.exchanges;
    this.exchanges = [];
    return taken;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
