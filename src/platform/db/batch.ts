import DataLoader from "dataloader";

/**
 * The one tool for sending what several callers ask for at about the same moment as one statement: each caller
 * `load`s its key, and `run` gets every key collected by the time `schedule` fires (by default, once the current
 * tick's promises have settled), at most `maxBatchSize` at a time, and answers one value per key, in key order.
 * DataLoader for its batching only: nothing is cached, so a key asked for again runs again (these statements
 * write, or must read what is there now), and a key asked for twice in one batch is passed twice.
 */
export function batchStatements<K, V>(
  run: (keys: readonly K[]) => Promise<V[]>,
  opts: { maxBatchSize?: number; schedule?: (send: () => void) => void } = {},
): DataLoader<K, V> {
  return new DataLoader(run, { cache: false, maxBatchSize: opts.maxBatchSize, batchScheduleFn: opts.schedule });
}
