import type { Plugin } from "graphql-yoga";
import { traceOperation } from "../platform/tracing/graphql.js";

/**
 * Each /graphql operation's execution in a span of its own (src/platform/tracing/graphql.ts). Our own few lines
 * rather than @envelop/opentelemetry: that plugin imports OpenTelemetry statically, which must not load when
 * tracing is off, and it would name spans and attributes otherwise than the REST routes' operations.
 */
export function useOperationSpans(): Plugin {
  return {
    onExecute: ({ executeFn, setExecuteFn }) => {
      setExecuteFn((args) => traceOperation(args.document, args.operationName, async () => executeFn(args)));
    },
  };
}
