import { pino, type Logger } from "pino";
import { tracer } from "./tracing/tracer.js";

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

interface LoggedError {
  type: string;
  message: string;
  code?: string;
  stack?: string;
}

/**
 * An error as a log line carries it: its class, message and code. pino's own serializer copies every enumerable
 * property, and node-postgres hangs the whole client on a lost idle connection's error (`err.client`: its
 * connection, parameters and prepared statements, 4 KB a line). An error without a code is a bug rather than a
 * fault of the outside world, so it keeps its stack, which is how one finds it.
 */
export function serializeError(value: unknown): unknown {
  if (!(value instanceof Error)) return value;
  const code = "code" in value && (typeof value.code === "string" || typeof value.code === "number") ? String(value.code) : undefined;
  const logged: LoggedError = { type: value.constructor.name, message: value.message };
  if (code !== undefined) logged.code = code;
  else if (value.stack) logged.stack = value.stack;
  return logged;
}

/**
 * Logs are written asynchronously: lines that arrive while a write is in flight are batched into the next
 * one, where a synchronous write per request line was a large share of the API's CPU under load. Idle
 * lines still go out at once; pino flushes what is left when the process exits.
 */
export function createLogger(level: string): Logger {
  const destination = pino.destination({ dest: 1, sync: false });
  return pino(
    {
      level,
      redact: { paths: redact, censor: "[redacted]" },
      base: { pid: process.pid },
      serializers: { err: serializeError },
      // With tracing on, a line written inside a span names it (`trace_id`, `span_id`); off, this adds nothing.
      mixin: () => tracer.logFields(),
    },
    destination,
  );
}
