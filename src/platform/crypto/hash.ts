import { createHash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";
import { ApiError } from "../errors.js";

const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 };

export interface HashingLimits {
  /** Slow hashes running at once in this process. */
  concurrency: number;
  /** Hashes that may wait for a free slot; one more is refused at once. */
  queue: number;
  /** How long a waiting hash may wait before it is refused. */
  waitMs: number;
}

/**
 * One hash at a time by default: each holds 16 MiB while it runs, and a second one raised the API's lifetime peak by
 * that much (148–154 against 166–170 MiB through the bench's token burst) while answering only about 15 % more tokens
 * in it, on 2 cores where it also takes the core other tenants' requests run on. More cores: raise it.
 */
export const DEFAULT_HASHING: HashingLimits = { concurrency: 1, queue: 32, waitMs: 2000 };

/** What the gate has done since the process started (read by /metrics and by tests). */
export interface HashingStats {
  started: number;
  refused: number;
  running: number;
  waiting: number;
  /** The most hashes that ever ran at once. */
  peakRunning: number;
}

/**
 * Every slow hash of the process passes this gate. Each scrypt holds 16 MiB and a libuv thread for tens of
 * milliseconds, so a flood of token requests or Application creations would otherwise take the memory, every
 * thread of the pool and the latency of everyone else; past the queue it is shed with 503.
 */
class HashGate {
  private limits = DEFAULT_HASHING;
  private running = 0;
  private readonly waiters: (() => void)[] = [];
  readonly stats = { started: 0, refused: 0, peakRunning: 0 };

  configure(limits: HashingLimits): void {
    this.limits = limits;
  }

  snapshot(): HashingStats {
    return { ...this.stats, running: this.running, waiting: this.waiters.length };
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running < this.limits.concurrency) this.running += 1;
    else await this.wait();
    this.stats.started += 1;
    this.stats.peakRunning = Math.max(this.stats.peakRunning, this.running);
    try {
      return await work();
    } finally {
      const next = this.waiters.shift();
      if (next) next();
      else this.running -= 1;
    }
  }

  /**
   * Resolves when a finishing hash hands its slot over: `running` is not decremented in between, so a newcomer
   * cannot slip in ahead of the queue and exceed the bound.
   */
  private wait(): Promise<void> {
    if (this.waiters.length >= this.limits.queue) return Promise.reject(this.refuse());
    return new Promise((resolve, reject) => {
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(wake), 1);
        reject(this.refuse());
      }, this.limits.waitMs);
      this.waiters.push(wake);
    });
  }

  private refuse(): ApiError {
    this.stats.refused += 1;
    return new ApiError("SERVICE_UNAVAILABLE", "Too many credential checks are in progress. Retry after 1 s, backing off with jitter.", undefined, {
      "retry-after": "1",
    });
  }
}

const gate = new HashGate();

/** Sets the process-wide bound on slow hashing (from configuration, at start). */
export function configureHashing(limits: HashingLimits): void {
  gate.configure(limits);
}

export function hashingStats(): HashingStats {
  return gate.snapshot();
}

function scryptAsync(secret: string, salt: Buffer, keylen: number, opts: ScryptOptions): Promise<Buffer> {
  return gate.run(() => new Promise((res, rej) => scrypt(secret, salt, keylen, opts, (e, key) => (e ? rej(e) : res(key)))));
}

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

export function sha256Hex(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

/** Slow hash for client secrets: scrypt with a random salt, parameters stored beside the hash. */
export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(secret, salt, SCRYPT.keylen, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p });
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

// Verifying against this keeps an unknown client_id as slow as a wrong secret.
const DUMMY_HASH = `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${randomToken(16)}$${randomToken(32)}`;

export async function verifySecret(secret: string, stored: string | null): Promise<boolean> {
  const [kind, n, r, p, salt, hash] = (stored ?? DUMMY_HASH).split("$");
  if (kind !== "scrypt" || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64url");
  const actual = await scryptAsync(secret, Buffer.from(salt, "base64url"), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return timingSafeEqual(actual, expected) && stored !== null;
}

export function safeEqual(a: string, b: string): boolean {
  const x = createHash("sha256").update(a).digest();
  const y = createHash("sha256").update(b).digest();
  return timingSafeEqual(x, y);
}
