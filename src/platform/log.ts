import { pino, type Logger } from "pino";

export type { Logger };

/** Secrets that must never reach a log line, wherever they appear in a logged object. */
const redact = [
  "req.headers.authorization",
  "headers.authorization",
  "client_secret",
  "clientSecret",
  "secret",
  "*.client_secret",
  "*.clientSecret",
  "*.secret",
  "access_token",
];

/**
 * Logs are written asynchronously: lines that arrive while a write is in flight are batched into the next
 * one, where a synchronous write per request line was a large share of the API's CPU under load. Idle
 * lines still go out at once; pino flushes what is left when the process exits.
 */
export function createLogger(level: string): Logger {
  const destination = pino.destination({ dest: 1, sync: false });
  return pino({ level, redact: { paths: redact, censor: "[redacted]" }, base: { pid: process.pid } }, destination);
}
