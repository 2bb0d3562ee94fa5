import http from "node:http";
import https from "node:https";
import { BlockList, isIP } from "node:net";
import type { LookupFunction } from "node:net";
import { performance } from "node:perf_hooks";
import { StringDecoder } from "node:string_decoder";

export interface SendWebhookOptions {
  url: URL;
  /** Pinned IP from checkWebhookUrl, so DNS rebinding between check and connect cannot redirect us. */
  address: string;
  headers: Record<string, string>;
  body: string;
  /** Bounds the whole attempt: connect, response headers and reading the excerpt. */
  timeoutMs: number;
  /** Default 4096. */
  maxResponseBytes?: number;
}

export interface SendWebhookResult {
  ok: boolean;
  status: number | null;
  durationMs: number;
  error: string | null;
  responseExcerpt: string | null;
  /** The attempt ran out of its time (it may have had a status line by then). */
  timedOut: boolean;
  /** The receiver's Retry-After header, as sent (seconds or an HTTP date); null when absent. */
  retryAfter: string | null;
}

export const DEFAULT_MAX_RESPONSE_BYTES = 4096;

/** Request options carrying the pinned address so the agent can key its pool on it. */
interface PinnedRequestOptions extends https.RequestOptions {
  pinnedAddress: string;
}

function pinSuffix(options: http.ClientRequestArgs | undefined): string {
  const pinned = (options as Partial<PinnedRequestOptions> | undefined)?.pinnedAddress;
  return pinned === undefined ? "" : `:pin=${pinned}`;
}

// Node pools keep-alive sockets by host:port, ignoring `lookup`; without the pin in the key a
// socket connected to an earlier pinned address could be reused for a request pinned elsewhere.
class PinnedHttpAgent extends http.Agent {
  override getName(options?: http.ClientRequestArgs): string {
    return super.getName(options) + pinSuffix(options);
  }
}

class PinnedHttpsAgent extends https.Agent {
  override getName(options?: https.RequestOptions): string {
    return super.getName(options) + pinSuffix(options);
  }
}

const AGENT_OPTIONS = {
  keepAlive: true,
  maxSockets: 256,
  maxFreeSockets: 256,
  // Idle sockets are dropped after 4 s (below the common 5 s server keep-alive) to avoid reusing one
  // the receiver is about to close; Node only honours `Keep-Alive: timeout=` hints when this is set.
  timeout: 4_000,
  scheduling: "lifo",
} as const;

const httpAgent = new PinnedHttpAgent(AGENT_OPTIONS);
const httpsAgent = new PinnedHttpsAgent(AGENT_OPTIONS);

/** Closes pooled keep-alive sockets (graceful shutdown, test teardown). */
export function destroyWebhookAgents(): void {
  httpAgent.destroy();
  httpsAgent.destroy();
}

function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return (_hostname, options, callback) => {
    // Node 20 asks for `all: true` when autoSelectFamily is on; answer both shapes. Defer like real DNS.
    process.nextTick(() => {
      if (options.all === true) callback(null, [{ address, family }]);
      else callback(null, address, family);
    });
  };
}

function sameAddress(a: string, b: string): boolean {
  // The pin is normally the URL's own literal, as the URL check returned it: equal text, no BlockList to build.
  if (a === b) return true;
  const list = new BlockList();
  list.addAddress(a, isIP(a) === 6 ? "ipv6" : "ipv4");
  return list.check(b, isIP(b) === 6 ? "ipv6" : "ipv4");
}

function excerptOf(chunks: readonly Buffer[]): string | null {
  if (chunks.length === 0) return null;
  // StringDecoder.write holds back a multi-byte character cut by the byte limit instead of emitting U+FFFD.
  const text = new StringDecoder("utf8").write(Buffer.concat(chunks));
  // Postgres text columns reject NUL, and the excerpt is stored verbatim.
  return text.replaceAll("\u0000", "\uFFFD");
}

const STALE_SOCKET_CODES = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED"]);

interface AttemptOutcome {
  status: number | null;
  error: string | null;
  excerpt: string | null;
  /** A pooled socket died before any response: the receiver closed it while idle, safe to retry once. */
  staleSocket: boolean;
  timedOut: boolean;
  retryAfter: string | null;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function statusError(status: number): string | null {
  if (status >= 200 && status < 300) return null;
  if (status >= 300 && status < 400) return `redirect (${status}) not followed`;
  return `HTTP ${status}`;
}

function attemptOnce(opts: SendWebhookOptions, family: 4 | 6, remainingMs: number, maxBytes: number): Promise<AttemptOutcome> {
  return new Promise<AttemptOutcome>((resolvePromise) => {
    const { url } = opts;
    const isHttps = url.protocol === "https:";
    const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;

    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(opts.headers)) {
      // Host comes from the URL (not the pinned IP); framing headers are ours to compute.
      const lower = name.toLowerCase();
      if (lower === "host" || lower === "content-length" || lower === "transfer-encoding") continue;
      headers[name] = value;
    }
    headers["content-length"] = String(Buffer.byteLength(opts.body, "utf8"));

    const requestOptions: PinnedRequestOptions = {
      protocol: url.protocol,
      hostname,
      port: url.port === "" ? (isHttps ? 443 : 80) : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: "POST",
      headers,
      agent: isHttps ? httpsAgent : httpAgent,
      lookup: pinnedLookup(opts.address, family),
      pinnedAddress: opts.address,
      // Verify the certificate against the URL's host name; SNI must not be an IP (RFC 6066).
      servername: isIP(hostname) === 0 ? hostname : "",
    };

    let settled = false;
    let status: number | null = null;
    let retryAfter: string | null = null;
    const chunks: Buffer[] = [];
    let received = 0;
    let timer: NodeJS.Timeout | undefined;

    const finish = (outcome: Omit<AttemptOutcome, "excerpt" | "staleSocket" | "timedOut" | "retryAfter"> & Partial<AttemptOutcome>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolvePromise({ excerpt: excerptOf(chunks), staleSocket: false, timedOut: false, retryAfter, ...outcome });
    };

    let req: http.ClientRequest;
    try {
      req = (isHttps ? https : http).request(requestOptions);
    } catch (err) {
      // e.g. a header value with a newline: Node throws synchronously rather than emitting "error".
      finish({ status: null, error: errorMessage(err) });
      return;
    }

    timer = setTimeout(() => {
      finish({ status, error: `timeout after ${opts.timeoutMs}ms`, timedOut: true });
      // Destroying (not just aborting) also evicts the socket from the keep-alive pool.
      req.destroy();
    }, remainingMs);

    req.on("error", (err: NodeJS.ErrnoException) => {
      const staleSocket = req.reusedSocket && status === null && err.code !== undefined && STALE_SOCKET_CODES.has(err.code);
      finish({ status, error: errorMessage(err), staleSocket });
    });

    req.on("response", (res) => {
      status = res.statusCode ?? null;
      retryAfter = typeof res.headers["retry-after"] === "string" ? res.headers["retry-after"] : null;
      const completeWith = (error: string | null): void => finish({ status, error: error ?? (status === null ? "no status" : statusError(status)) });

      if (maxBytes === 0) {
        completeWith(null);
        res.destroy();
        return;
      }
      res.on("data", (chunk: Buffer) => {
        if (settled) return;
        const room = maxBytes - received;
        if (chunk.length >= room) {
          chunks.push(chunk.subarray(0, room));
          received = maxBytes;
          completeWith(null);
          // Stop reading: a huge or endless body must not hold the attempt (or memory) hostage.
          res.destroy();
          return;
        }
        chunks.push(chunk);
        received += chunk.length;
      });
      res.on("end", () => completeWith(null));
      res.on("error", (err) => completeWith(`response body failed: ${errorMessage(err)}`));
      res.on("close", () => {
        if (!res.complete) completeWith("connection closed before the response body was complete");
      });
    });

    req.end(opts.body);
  });
}

/**
 * Performs one webhook delivery attempt as a POST to the pinned address. Never follows
 * redirects; ok only for 2xx with the response read cleanly (or up to the excerpt limit).
 */
export async function sendWebhook(opts: SendWebhookOptions): Promise<SendWebhookResult> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  const failed = (error: string): SendWebhookResult => ({
    ok: false,
    status: null,
    durationMs: elapsed(),
    error,
    responseExcerpt: null,
    timedOut: false,
    retryAfter: null,
  });

  const maxBytes = opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  if (!Number.isFinite(opts.timeoutMs) || opts.timeoutMs <= 0) return failed(`invalid timeoutMs ${opts.timeoutMs}`);
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) return failed(`invalid maxResponseBytes ${maxBytes}`);
  if (opts.url.protocol !== "https:" && opts.url.protocol !== "http:") return failed(`unsupported scheme ${opts.url.protocol}`);
  const family = isIP(opts.address);
  if (family !== 4 && family !== 6) return failed(`pinned address "${opts.address}" is not an IP address`);
  const literal = opts.url.hostname.startsWith("[") ? opts.url.hostname.slice(1, -1) : opts.url.hostname;
  if (isIP(literal) !== 0 && !sameAddress(literal, opts.address)) {
    // Node connects to an IP-literal host directly without calling lookup, so the pin could not apply.
    return failed(`pinned address ${opts.address} does not match the URL's IP address ${literal}`);
  }

  let outcome = await attemptOnce(opts, family, opts.timeoutMs, maxBytes);
  const remaining = opts.timeoutMs - (performance.now() - started);
  if (outcome.staleSocket && remaining > 0) {
    // Standard keep-alive race: the receiver closed an idle pooled socket as we reused it.
    outcome = await attemptOnce(opts, family, remaining, maxBytes);
  }

  const ok = outcome.error === null && outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
  return {
    ok,
    status: outcome.status,
    durationMs: elapsed(),
    error: outcome.error,
    responseExcerpt: outcome.excerpt,
    timedOut: outcome.timedOut,
    retryAfter: outcome.retryAfter,
  };
}
