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

export function createLogger(level: string): Logger {
  return pino({ level, redact: { paths: redact, censor: "[redacted]" }, base: { pid: process.pid } });
}
