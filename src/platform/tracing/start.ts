import type { Config } from "../config.js";
import type { Logger } from "../log.js";
import { tracer, type TracingSettings, useTracer } from "./tracer.js";

/** The settings the variables give, or null when they leave tracing off. */
export function tracingSettings(config: Config): TracingSettings | null {
  const exporter = config.OTEL_TRACES_EXPORTER;
  const base = config.OTEL_EXPORTER_OTLP_ENDPOINT;
  const traces = config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (config.OTEL_SDK_DISABLED || exporter === "none") return null;
  if (exporter === undefined && base === undefined && traces === undefined) return null;
  // The OTLP default when only OTEL_TRACES_EXPORTER=otlp says to export.
  const url = traces ?? `${(base ?? "http://localhost:4318").replace(/\/$/, "")}/v1/traces`;
  const protocol = config.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? config.OTEL_EXPORTER_OTLP_PROTOCOL ?? "http/protobuf";
  return { url, protocol, serviceName: config.OTEL_SERVICE_NAME };
}

/**
 * Starts tracing when the variables ask for it; answers what flushes and stops it (spans not yet exported go
 * out first). Once per process: the SDK registers itself globally.
 */
export async function startTracing(config: Config, log: Logger): Promise<() => Promise<void>> {
  const settings = tracingSettings(config);
  if (!settings || tracer.enabled) return async () => undefined;
  const { createOtelTracer } = await import("./otel.js");
  const started = await createOtelTracer(settings, log);
  useTracer(started.tracer);
  log.info({ url: settings.url, protocol: settings.protocol, serviceName: settings.serviceName }, "exporting traces");
  return async () => {
    await started.shutdown();
    useTracer(null);
  };
}
