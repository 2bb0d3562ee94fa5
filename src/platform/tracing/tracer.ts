/**
 * Traces, as the code sees them. The process has one tracer: a no-op until `startTracing` (./start.ts) finds OpenTelemetry's
 * variables set, when it loads the SDK (./otel.ts) and swaps in the real one. With tracing off no OpenTelemetry
 * module is ever imported, and a hot path pays one property read (`tracer.enabled`) or a call that does nothing.
 */

export type SpanKind = "internal" | "server" | "client" | "producer" | "consumer";
export type Attributes = Record<string, string | number | boolean | undefined>;

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The span continues this W3C `traceparent` (an incoming request's, a job's) instead of the active span or `root`. */
  parent?: string | null;
  /** Starts a trace of its own, whatever span is active. */
  root?: boolean;
  /** Traces the span follows from without belonging to them (a retry's, a replay's original), as traceparents. */
  links?: readonly (string | null)[];
}

export interface Span {
  setAttributes(attributes: Attributes): void;
  updateName(name: string): void;
  /** Marks the span failed by `error` (recorded as an exception). */
  fail(error: unknown): void;
  end(): void;
  /** The W3C `traceparent` naming this span as the parent, or null when it is not recorded. */
  traceparent(): string | null;
  /** Its ids for a log line: `trace_id`, `span_id`. */
  logFields(): Record<string, string>;
}

export interface Tracer {
  readonly enabled: boolean;
  /** Starts a span (a child of the active span unless the options say otherwise); the caller ends it. */
  start(name: string, options?: SpanOptions): Span;
  /** Runs `fn` with `span` active: the spans started inside are its children. */
  within<T>(span: Span, fn: () => T): T;
  /** Runs `fn` in a new active span, which ends when `fn` settles; a rejection marks it failed. */
  trace<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T>;
  /** The active span's `traceparent`: what a write stores with its events so their jobs continue its trace. */
  traceparent(): string | null;
  /** The active span's ids for a log line (none when no span is active). */
  logFields(): Record<string, string>;
}

const NOOP_SPAN: Span = {
  setAttributes: () => undefined,
  updateName: () => undefined,
  fail: () => undefined,
  end: () => undefined,
  traceparent: () => null,
  logFields: () => ({}),
};

const NOOP_TRACER: Tracer = {
  enabled: false,
  start: () => NOOP_SPAN,
  within: (_span, fn) => fn(),
  trace: (_name, _options, fn) => fn(NOOP_SPAN),
  traceparent: () => null,
  logFields: () => ({}),
};

/** The process's tracer (a live binding: it becomes the SDK's once tracing starts, see ./start.ts). */
export let tracer: Tracer = NOOP_TRACER;

/** Installs the SDK's tracer, or with null the no-op again. */
export function useTracer(next: Tracer | null): void {
  tracer = next ?? NOOP_TRACER;
}

/** Where and how traces are exported, from OpenTelemetry's standard variables; null when tracing is off. */
export interface TracingSettings {
  /** The OTLP/HTTP traces URL. */
  url: string;
  protocol: "http/protobuf" | "http/json";
  serviceName: string;
}
