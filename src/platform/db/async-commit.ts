/**
 * A FROM item that makes the statement's own transaction commit without waiting for the WAL flush
 * (`synchronous_commit` off, transaction-local). For bookkeeping that is safe to lose in a database crash:
 * rate-limit counts, and delivery claims and records, whose loss only means an attempt runs again
 * (at-least-once). WAL is flushed in order, so any later synchronous commit (a job's completion) makes these
 * durable too. Add it to the statement's FROM list; it must be referenced to be evaluated.
 */
export const ASYNC_COMMIT = "(select set_config('synchronous_commit', 'off', true)) as async_commit";
