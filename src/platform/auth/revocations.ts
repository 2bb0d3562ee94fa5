import type pg from "pg";
import { ApiError } from "../errors.js";
import type { Logger } from "../log.js";
import type { Notifications } from "../db/notifications.js";

/**
 * The channel the token_revoked trigger notifies at commit for every row inserted into "RevokedToken", whichever
 * process, CLI or psql session inserted it: `<the token's expiry, ms since the epoch> <jti>`.
 */
export const TOKEN_REVOKED_CHANNEL = "token_revoked";

const INSERT_REVOCATION = `INSERT INTO "RevokedToken" (jti, "clientId", "expiresAt") VALUES ($1, $2, $3) ON CONFLICT (jti) DO NOTHING`;
const SELECT_UNEXPIRED = `SELECT jti, "expiresAt" FROM "RevokedToken" WHERE "expiresAt" > now()`;
/** Run by the hourly cleanup_events task: a revoked token past its expiry fails verification anyway. */
export const DELETE_EXPIRED_REVOCATIONS = `DELETE FROM "RevokedToken" WHERE "expiresAt" <= now()`;

/** Below this many entries expired ones are left for the check that meets them. */
const FIRST_SWEEP_AT = 1024;
/** A read of the table that failed is tried again after this long. */
const RETRY_READ_MS = 1000;

/** The one answer to a revoked access token, on REST, /graphql and live streams alike. */
export const tokenRevoked = () => new ApiError("INVALID_TOKEN", "The access token was revoked. Request a new one at POST /partner/auth/token.");

/** What revoking needs of a verified token. */
export interface RevocableToken {
  tokenId: string;
  clientId: string;
  /** ms since the epoch */
  expiresAt: number;
}

/**
 * The access tokens revoked before their expiry (RFC 7009), by jti. Every request with a partner token asks, so
 * each API process holds them in memory: read from the table on first use, then kept current by TOKEN_REVOKED_CHANNEL,
 * which PostgreSQL delivers at commit to every process. Notifications sent while the LISTEN is lost are gone, so
 * on losing and regaining it the table is read again. Only unexpired tokens are kept (an expired one fails
 * verification anyway): expired entries are dropped each time the map doubles, so it stays within the tokens
 * revoked during the last token lifetime.
 */
export class TokenRevocations {
  /** jti → the token's expiry, ms since the epoch. */
  private readonly revoked = new Map<string, number>();
  /** Live streams waiting for their token's revocation, by jti. */
  private readonly waiters = new Map<string, Set<() => void>>();
  private started: Promise<void> | null = null;
  private unwatch: (() => void) | null = null;
  /** A read of the table that has not started yet: later requests for one share it. */
  private queuedRead: Promise<void> | null = null;
  private lastRead: Promise<void> = Promise.resolve();
  private sweepAt = FIRST_SWEEP_AT;
  private closed = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly notifications: Notifications,
    private readonly log: Logger,
  ) {}

  /**
   * Listens for revocations, then reads those already made; once, on first use, so a worker holds no connection for
   * it. Resolves when that first read is over, successful or not (a failed one is retried in the background).
   */
  start(): Promise<void> {
    this.started ??= (async () => {
      this.unwatch = this.notifications.watch((payload) => this.heard(payload));
      await this.notifications.ready();
      await this.read();
    })();
    return this.started;
  }

  /** Whether the token with this jti was revoked and has not expired yet. */
  async has(jti: string): Promise<boolean> {
    await this.start();
    const until = this.revoked.get(jti);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.revoked.delete(jti);
    return false;
  }

  /**
   * Revokes a token until its expiry: this process knows at once, every other one when the insert's notification
   * reaches it. Revoking a token twice changes nothing.
   */
  async revoke(token: RevocableToken): Promise<void> {
    await this.pool.query(INSERT_REVOCATION, [token.tokenId, token.clientId, new Date(token.expiresAt)]);
    this.add(token.tokenId, token.expiresAt);
    this.wake(token.tokenId);
  }

  /**
   * Resolves once this process learns that the token with this jti was revoked, or may have missed it (a lost or
   * regained LISTEN: the table is read again first), or when `signal` aborts. Call it before checking, then check,
   * then await it: a revocation that arrives while checking is not missed.
   */
  next(jti: string, signal: AbortSignal): Promise<void> {
    void this.start();
    return new Promise((resolve) => {
      const set = this.waiters.get(jti) ?? new Set<() => void>();
      this.waiters.set(jti, set);
      const wake = () => {
        set.delete(wake);
        if (set.size === 0) this.waiters.delete(jti);
        signal.removeEventListener("abort", wake);
        resolve();
      };
      set.add(wake);
      signal.addEventListener("abort", wake, { once: true });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.unwatch?.();
    for (const jti of [...this.waiters.keys()]) this.wake(jti);
    await this.notifications.close();
  }

  /** A notification's payload, or null when notifications may have been missed. */
  private heard(payload: string | null): void {
    const space = payload?.indexOf(" ") ?? -1;
    const until = payload ? Number(payload.slice(0, space)) : Number.NaN;
    if (payload && space > 0 && Number.isSafeInteger(until)) {
      const jti = payload.slice(space + 1);
      this.add(jti, until);
      this.wake(jti);
      return;
    }
    if (payload) this.log.warn({ payload, channel: TOKEN_REVOKED_CHANNEL }, "malformed notification; reading every revocation again");
    void this.read().then(() => {
      for (const jti of [...this.waiters.keys()]) this.wake(jti);
    });
  }

  /** Reads every unexpired revocation into the map; one read at a time, each after any revocation it may have missed. */
  private read(): Promise<void> {
    if (this.queuedRead) return this.queuedRead;
    const read = this.lastRead
      .then(async () => {
        this.queuedRead = null;
        const { rows } = await this.pool.query<{ jti: string; expiresAt: Date }>(SELECT_UNEXPIRED);
        for (const row of rows) this.add(row.jti, row.expiresAt.getTime());
      })
      .catch((err: unknown) => {
        if (this.closed) return;
        this.log.warn({ err }, "could not read the revoked access tokens; trying again");
        setTimeout(() => void this.read(), RETRY_READ_MS).unref();
      });
    this.queuedRead = read;
    this.lastRead = read;
    return read;
  }

  private add(jti: string, until: number): void {
    if (until <= Date.now()) return;
    this.revoked.set(jti, until);
    if (this.revoked.size < this.sweepAt) return;
    const now = Date.now();
    for (const [key, expiry] of this.revoked) if (expiry <= now) this.revoked.delete(key);
    this.sweepAt = Math.max(FIRST_SWEEP_AT, 2 * this.revoked.size);
  }

  private wake(jti: string): void {
    for (const wake of [...(this.waiters.get(jti) ?? [])]) wake();
  }
}
