import type * as Api from "@opentelemetry/api";
import type { Logger } from "../log.js";
import type { Attributes, Span, SpanKind, SpanOptions, Tracer, TracingSettings } from "./tracer.js";

/**
 * The tracer on OpenTelemetry's SDK, loaded only when tracing is on. Every OpenTelemetry package is imported here,
 * dynamically: a static import would be hoisted to the top of `npm start`'s bundle and load with tracing off.
 */
export async function createOtelTracer(settings: TracingSettings, log: Logger): Promise<{ tracer: Tracer; shutdown: () => Promise<void> }> {
  const [api, sdk, resources, exporters, { PgInstrumentation }, { default: pg }] = await Promise.all([
    import("@opentelemetry/api"),
    import("@opentelemetry/sdk-trace-node"),
    import("@opentelemetry/resources"),
    settings.protocol === "http/json" ? import("@opentelemetry/exporter-trace-otlp-http") : import("@opentelemetry/exporter-trace-otlp-proto"),
    import("@opentelemetry/instrumentation-pg"),
    import("pg"),
  ]);
  // The SDK reports a collector it cannot reach through its diagnostic logger: into the service's log, once a line.
  api.diag.setLogger(
    {
      error: (message, ...args) => log.warn({ detail: [message, ...args].map(String).join(" ") }, "tracing"),
      warn: (message, ...args) => log.warn({ detail: [message, ...args].map(String).join(" ") }, "tracing"),
      info: () => undefined,
      debug: () => undefined,
      verbose: () => undefined,
    },
    api.DiagLogLevel.WARN,
  );
  const resource = resources
    .resourceFromAttributes({ "service.name": settings.serviceName })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  // The batch's delay and size, and the sampler, come from OTEL_BSP_* and OTEL_TRACES_SAMPLER(_ARG), read by the SDK.
  const provider = new sdk.NodeTracerProvider({
    resource,
    spanProcessors: [new sdk.BatchSpanProcessor(new exporters.OTLPTraceExporter({ url: settings.url }))],
  });
  // An AsyncLocalStorage context manager and the W3C Trace Context propagator.
  provider.register();

  // SQL statements, one span each, only inside a trace (never the worker's polling on its own). `pg` was loaded
  // by an ES import, which no require hook sees: its Client is patched here as the instrumentation would at load.
  // The instrumentation names the database `db.system.name` (the stable conventions); `db.system` too, for backends
  // that still group by the older name.
  const statements = new PgInstrumentation({
    enabled: false,
    requireParentSpan: true,
    requestHook: (span) => span.setAttribute("db.system", "postgresql"),
  });
  statements.setTracerProvider(provider);
  const pgModule = statements.getModuleDefinitions().find((d) => d.name === "pg");
  pgModule?.patch?.(pg);

  const tracer = new OtelTracer(api, provider.getTracer("partner-platform"));
  return {
    tracer,
    shutdown: async () => {
      pgModule?.unpatch?.(pg);
      await provider.shutdown();
      api.trace.disable();
      api.context.disable();
      api.propagation.disable();
    },
  };
}

type OtelApi = typeof Api;

class OtelSpan implements Span {
  constructor(readonly inner: Api.Span) {}

  setAttributes(attributes: Attributes): void {
    this.inner.setAttributes(attributes);
  }

  updateName(name: string): void {
    this.inner.updateName(name);
  }

  fail(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.inner.recordException(error instanceof Error ? error : message);
    // 2 is SpanStatusCode.ERROR (the API is only imported as a type here).
    this.inner.setStatus({ code: 2, message });
  }

  end(): void {
    this.inner.end();
  }

  traceparent(): string | null {
    return traceparentOf(this.inner.spanContext());
  }

  logFields(): Record<string, string> {
    const { traceId, spanId } = this.inner.spanContext();
    return { trace_id: traceId, span_id: spanId };
  }
}

function traceparentOf(context: Api.SpanContext): string {
  return `00-${context.traceId}-${context.spanId}-${context.traceFlags & 1 ? "01" : "00"}`;
}

class OtelTracer implements Tracer {
  readonly enabled = true;
  private readonly kinds: Record<SpanKind, Api.SpanKind>;

  constructor(
    private readonly api: OtelApi,
    private readonly tracer: Api.Tracer,
  ) {
    const { SpanKind: K } = api;
    this.kinds = { internal: K.INTERNAL, server: K.SERVER, client: K.CLIENT, producer: K.PRODUCER, consumer: K.CONSUMER };
  }

  /** The span context a traceparent names, when it is valid. */
  private remote(traceparent: string): Api.SpanContext | undefined {
    const { api } = this;
    const context = api.trace.getSpanContext(api.propagation.extract(api.ROOT_CONTEXT, { traceparent }));
    return context && api.trace.isSpanContextValid(context) ? context : undefined;
  }

  start(name: string, options: SpanOptions = {}): Span {
    const { api } = this;
    const parent = options.parent
      ? api.propagation.extract(api.ROOT_CONTEXT, { traceparent: options.parent })
      : options.root
        ? api.ROOT_CONTEXT
        : api.context.active();
    const links: Api.Link[] = [];
    for (const traceparent of options.links ?? []) {
      const context = traceparent ? this.remote(traceparent) : undefined;
      if (context) links.push({ context });
    }
    const span = this.tracer.startSpan(name, { kind: this.kinds[options.kind ?? "internal"], attributes: options.attributes, links }, parent);
    return new OtelSpan(span);
  }

  within<T>(span: Span, fn: () => T): T {
    if (!(span instanceof OtelSpan)) return fn();
    const { api } = this;
    return api.context.with(api.trace.setSpan(api.context.active(), span.inner), fn);
  }

  async trace<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
    const span = this.start(name, options);
    try {
      return await this.within(span, () => fn(span));
    } catch (e) {
      span.fail(e);
      throw e;
    } finally {
      span.end();
    }
  }

  traceparent(): string | null {
    const span = this.api.trace.getActiveSpan();
    return span ? traceparentOf(span.spanContext()) : null;
  }

  logFields(): Record<string, string> {
    const span = this.api.trace.getActiveSpan();
    if (!span) return {};
    const { traceId, spanId } = span.spanContext();
    return { trace_id: traceId, span_id: spanId };
  }
}
