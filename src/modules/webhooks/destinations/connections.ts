import type { Publisher } from "./types.js";

/**
 * The worker's open broker connections: one per broker configuration (type, broker and credentials), shared by every
 * delivery that uses it, closed after `idleMs` unused, dropped after a failure (the next attempt opens a new one). A
 * publish, connecting included, is bounded by the attempt's timeout: a broker that hangs costs at most that, and only
 * the deliveries to it wait.
 */
interface Entry {
  publisher: Promise<Publisher<unknown>>;
  idle: NodeJS.Timeout | null;
  inFlight: number;
}

export class TimeoutError extends Error {}

export class Connections {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly idleMs: number) {}

  /** Publishes on the connection `key` names, opening it with `open` when none is open. */
  async publish(key: string, open: () => Promise<Publisher<unknown>>, send: (p: Publisher<unknown>) => Promise<string>, timeoutMs: number): Promise<string> {
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { publisher: open(), idle: null, inFlight: 0 };
      this.entries.set(key, entry);
    }
    const current = entry;
    if (current.idle) clearTimeout(current.idle);
    current.idle = null;
    current.inFlight++;
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new TimeoutError(`timeout after ${timeoutMs}ms`)), timeoutMs);
      });
      return await Promise.race([current.publisher.then(send), timeout]);
    } catch (err) {
      // A refusal, a dropped connection or a broker that hangs: start afresh next time.
      this.drop(key, current);
      throw err;
    } finally {
      clearTimeout(timer);
      current.inFlight--;
      if (current.inFlight === 0 && this.entries.get(key) === current) {
        current.idle = setTimeout(() => this.drop(key, current), this.idleMs);
        current.idle.unref();
      }
    }
  }

  private drop(key: string, entry: Entry): void {
    if (this.entries.get(key) === entry) this.entries.delete(key);
    if (entry.idle) clearTimeout(entry.idle);
    entry.publisher.then((p) => p.close()).catch(() => undefined);
  }

  /** Closes every connection (shutdown). */
  async close(): Promise<void> {
    const entries = [...this.entries];
    this.entries.clear();
    await Promise.all(
      entries.map(async ([, entry]) => {
        if (entry.idle) clearTimeout(entry.idle);
        await entry.publisher.then((p) => p.close()).catch(() => undefined);
      }),
    );
  }
}
