import type pg from "pg";
import type { Notifications } from "../db/notifications.js";
import { admitGrant, type GrantView, readGrant } from "./grant-rule.js";
import type { PartnerClaims, PartnerPrincipal } from "./principal.js";

/** The channel the grant_changed triggers notify at commit when anything `readGrant` reads changes. */
export const GRANT_CHANGED_CHANNEL = "grant_changed";

/** Enough for every (Application, store) pair of a large deployment; an entry is a few hundred bytes. */
const DEFAULT_MAX_ENTRIES = 10_000;

interface Entry {
  grant: GrantView;
  expiresAt: number;
}

/**
 * Admits partner tokens by the grants `readGrant` read, kept by (client_id, store code) for at most `ttlMs` (0: no
 * cache). A change to any of them is announced on GRANT_CHANGED_CHANNEL at commit, which clears the whole cache
 * (revocations are rare); the TTL bounds how long a row can outlive a notification that was lost. Nothing is
 * stored while the LISTEN is not in place, and a read that a notification (or a lost connection) overtook is not
 * stored either: it may have seen the row before the change committed. Only grants that let a token in are kept:
 * a refusal reads again, so a new or reactivated grant, or a re-enabled Application, works at once.
 *
 * A Map in insertion order is the whole eviction policy (oldest first), which is all a bound needs here: hits do
 * not reorder entries, so no LRU library is worth its dependency.
 */
export class GrantCache {
  private readonly entries = new Map<string, Entry>();
  /** Bumped by every wake-up; a read stores its row only if no wake-up came while it ran. */
  private generation = 0;
  private unwatch: (() => void) | null = null;
  /** Since the process started: admits answered from the cache, admits that read the grant, and clears. */
  readonly stats = { hits: 0, misses: 0, clears: 0 };

  constructor(
    private readonly pool: pg.Pool,
    private readonly ttlMs: number,
    private readonly notifications: Notifications,
    private readonly maxEntries = DEFAULT_MAX_ENTRIES,
  ) {}

  /**
   * Starts listening for changes, without which nothing is stored; resolves once the LISTEN is in place or this
   * attempt failed (it is retried in the background). The HTTP app calls it: a worker holds no connection for it.
   */
  async listen(): Promise<void> {
    if (this.ttlMs === 0) return;
    this.unwatch ??= this.notifications.watch(() => this.invalidate());
    await this.notifications.ready();
  }

  /** The principal the claims' grant admits (`admitGrant`: 403 otherwise). */
  async admit(claims: PartnerClaims): Promise<PartnerPrincipal> {
    if (this.ttlMs === 0) return admitGrant(claims, await readGrant(this.pool, claims));
    const key = `${claims.clientId.length}:${claims.clientId}${claims.storeCode}`;
    const now = performance.now();
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > now) {
      this.stats.hits++;
      return admitGrant(claims, hit.grant);
    }
    this.stats.misses++;
    const generation = this.generation;
    const grant = await readGrant(this.pool, claims);
    this.entries.delete(key);
    const principal = admitGrant(claims, grant);
    if (grant && generation === this.generation && this.notifications.listening) {
      this.entries.set(key, { grant, expiresAt: now + this.ttlMs });
      const oldest = this.entries.keys().next();
      if (this.entries.size > this.maxEntries && !oldest.done) this.entries.delete(oldest.value);
    }
    return principal;
  }

  /**
   * A grant this process changed: cleared now, so its caller's next request here sees the change without waiting for
   * the notification (which still clears every other process, and this one again).
   */
  changed(): void {
    this.invalidate();
  }

  /**
   * Resolves at the next notification on GRANT_CHANGED_CHANNEL or lost or regained LISTEN (by then the watcher
   * listen() set up has cleared the cache), or when `signal` aborts; live streams check their grant again then. Call
   * it before checking, then check, then await it: a change committed while checking is not missed. It listens even
   * with no cache (TTL 0).
   */
  nextChange(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        unwatch();
        signal.removeEventListener("abort", wake);
        resolve();
      };
      const unwatch = this.notifications.watch(wake);
      signal.addEventListener("abort", wake, { once: true });
    });
  }

  /** How many grants are held. */
  get size(): number {
    return this.entries.size;
  }

  async close(): Promise<void> {
    this.unwatch?.();
    this.invalidate();
    await this.notifications.close();
  }

  private invalidate(): void {
    this.stats.clears++;
    this.generation++;
    this.entries.clear();
  }
}
