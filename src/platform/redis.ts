import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import type { Logger } from "./log.js";

/** A command waits this long for Redis at most: a request or a delivery must not hang on a stalled server. */
export const REDIS_COMMAND_TIMEOUT_MS = 1000;

/** A Lua script and its SHA1, which is what runs it once Redis has loaded it. */
export interface RedisScript {
  source: string;
  sha: string;
}

export function redisScript(source: string): RedisScript {
  return { source, sha: createHash("sha1").update(source).digest("hex") };
}

/** What the features that keep state in Redis ask of it. */
export interface RedisCommands {
  /** Runs `script` atomically over `keys`; a Redis that forgot its scripts (a restart, SCRIPT FLUSH) is sent it again. */
  run(script: RedisScript, keys: string[], args: (string | number)[]): Promise<unknown>;
  get(key: string): Promise<string | null>;
  /** Whether the client is connected now. */
  ready(): boolean;
}

/**
 * The process's one Redis client (REDIS_URL), shared by what keeps state there: the rate-limit counters, the webhook
 * pace and the write marks of read-your-writes. It opens when the first of them asks for it, so a process that keeps
 * nothing in Redis neither connects nor loads ioredis (about 7 MB of resident memory). A command waits for a
 * connection at most REDIS_COMMAND_TIMEOUT_MS and fails at the first failed reconnection (maxRetriesPerRequest 0), so
 * callers do not pile up behind a server that is down, while the client reconnects in the background. Each feature
 * says what it does while Redis is unreachable, for the one line logged per outage.
 */
export class SharedRedis {
  private opening: Promise<RedisCommands> | null = null;
  private client: Redis | null = null;
  private closing: Promise<void> | null = null;
  private readonly whileDown = new Set<string>();
  private reachable = true;

  constructor(
    private readonly url: string,
    private readonly log: Logger,
  ) {}

  /** The shared client, opened on first use; `whileDown` is what the caller does while Redis is unreachable. */
  use(whileDown: string): Promise<RedisCommands> {
    this.whileDown.add(whileDown);
    this.opening ??= this.open();
    return this.opening;
  }

  private async open(): Promise<RedisCommands> {
    const { Redis } = await import("ioredis");
    const client = new Redis(this.url, { commandTimeout: REDIS_COMMAND_TIMEOUT_MS, maxRetriesPerRequest: 0, enableAutoPipelining: true });
    this.client = client;
    client.on("error", (err: Error) => {
      // ioredis reports every failed reconnection; one line per outage is enough.
      if (this.reachable) this.log.warn({ err: err.message }, `Redis unreachable: ${[...this.whileDown].join(", ")} until it is back`);
      this.reachable = false;
    });
    client.on("ready", () => {
      if (!this.reachable) this.log.info("Redis reachable again");
      this.reachable = true;
    });
    return {
      run: async (script, keys, args) => {
        try {
          return await client.evalsha(script.sha, keys.length, ...keys, ...args);
        } catch (err) {
          if (err instanceof Error && err.message.startsWith("NOSCRIPT")) return client.eval(script.source, keys.length, ...keys, ...args);
          throw err;
        }
      },
      get: (key) => client.get(key),
      ready: () => client.status === "ready",
    };
  }

  /** Closes the client, once, after the features using it have stopped. */
  close(): Promise<void> {
    this.closing ??= this.quit();
    return this.closing;
  }

  private async quit(): Promise<void> {
    await this.opening?.catch(() => undefined);
    const client = this.client;
    if (client) await client.quit().catch(() => client.disconnect());
  }
}
