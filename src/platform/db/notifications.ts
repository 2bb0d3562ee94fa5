import pg from "pg";
import type { Logger } from "../log.js";

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;

/**
 * One LISTEN connection per process for a PostgreSQL notification channel, waking the readers waiting on a
 * notification's payload (a key such as a store id) and every watcher of the whole channel. It connects on first
 * use, outside the request pool (a LISTEN holds its connection for good), and reconnects with backoff while anyone
 * waits or watches; on losing the connection and again on getting it back, every waiter and watcher is woken,
 * since a notification sent meanwhile is gone and readers must look for themselves. A wake-up says "look again",
 * never what changed: readers re-read, so a lost or merged notification costs latency, not data.
 */
export class Notifications {
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly watchers = new Set<(payload: string | null) => void>();
  private closed = false;
  private backoff = RECONNECT_MIN_MS;

  constructor(
    private readonly connectionString: string,
    private readonly channel: string,
    private readonly log: Logger,
  ) {}

  /**
   * Resolves at the next notification for `key` (or any reconnect), or when `signal` aborts. Call it before
   * reading, then read, then await it: a notification that arrives while reading is not missed.
   */
  next(key: string, signal: AbortSignal): Promise<void> {
    void this.ensureConnected();
    return new Promise((resolve) => {
      const set = this.waiters.get(key) ?? new Set<() => void>();
      this.waiters.set(key, set);
      const wake = () => {
        set.delete(wake);
        if (set.size === 0) this.waiters.delete(key);
        signal.removeEventListener("abort", wake);
        resolve();
      };
      set.add(wake);
      signal.addEventListener("abort", wake, { once: true });
    });
  }

  /**
   * Calls `wake` with the payload of every notification of the channel, and with null whenever notifications may
   * have been missed (the connection lost or regained); returns the function that stops it.
   */
  watch(wake: (payload: string | null) => void): () => void {
    this.watchers.add(wake);
    void this.ensureConnected();
    return () => this.watchers.delete(wake);
  }

  /** True while the LISTEN is in place: a notification committed now will arrive. */
  get listening(): boolean {
    return this.client !== null;
  }

  /** Connects unless connected; resolves once this attempt is over (a failed one is retried in the background). */
  ready(): Promise<void> {
    return this.ensureConnected();
  }

  /** True once close() was called: readers stop. */
  get isClosed(): boolean {
    return this.closed;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wakeAll();
    await this.client?.end().catch(() => undefined);
    this.client = null;
  }

  private wake(key: string): void {
    for (const wake of [...(this.waiters.get(key) ?? [])]) wake();
    this.wakeWatchers(key);
  }

  private wakeAll(): void {
    for (const key of [...this.waiters.keys()]) for (const wake of [...(this.waiters.get(key) ?? [])]) wake();
    this.wakeWatchers(null);
  }

  private wakeWatchers(payload: string | null): void {
    for (const wake of [...this.watchers]) wake(payload);
  }

  private ensureConnected(): Promise<void> {
    if (this.client || this.closed) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async connect(): Promise<void> {
    // Named, so an operator (or a test) can find it in pg_stat_activity.
    const client = new pg.Client({ connectionString: this.connectionString, application_name: `listen ${this.channel}` });
    client.on("notification", (msg) => {
      if (msg.channel === this.channel && msg.payload) this.wake(msg.payload);
    });
    client.on("error", (err) => {
      this.log.warn({ err, channel: this.channel }, "notification connection lost; reconnecting");
      this.lost(client);
    });
    client.on("end", () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${pg.escapeIdentifier(this.channel)}`);
      if (this.closed) {
        await client.end();
        return;
      }
      this.client = client;
      this.backoff = RECONNECT_MIN_MS;
      // Anything committed while there was no listener was not announced: readers look again.
      this.wakeAll();
    } catch (err) {
      this.log.warn({ err, channel: this.channel }, "could not listen for notifications; retrying");
      client.end().catch(() => undefined);
      this.retryLater();
    }
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = null;
    this.wakeAll();
    this.retryLater();
  }

  private retryLater(): void {
    if (this.closed || (this.waiters.size === 0 && this.watchers.size === 0)) return;
    const delay = this.backoff;
    this.backoff = Math.min(this.backoff * 2, RECONNECT_MAX_MS);
    setTimeout(() => void this.ensureConnected(), delay).unref();
  }
}
