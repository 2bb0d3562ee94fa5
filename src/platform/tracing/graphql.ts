import type { DocumentNode, OperationDefinitionNode } from "graphql";
import { tracer } from "./tracer.js";

/**
 * Runs a GraphQL operation in a span named as OpenTelemetry's GraphQL conventions say (`mutation updateOrder`), so
 * its SQL and the commit of its events are its children. REST routes (src/rest/execute.ts) and /graphql (a Yoga
 * plugin, src/graphql/tracing.ts) both run theirs through it. Tracing off, it only calls `run`.
 */
export function traceOperation<T>(document: DocumentNode, operationName: string | null | undefined, run: () => Promise<T>): Promise<T> {
  if (!tracer.enabled) return run();
  const operation = document.definitions.find(
    (d): d is OperationDefinitionNode => d.kind === "OperationDefinition" && (!operationName || d.name?.value === operationName),
  );
  const type = operation?.operation ?? "query";
  const name = operation?.name?.value;
  return tracer.trace(name ? `${type} ${name}` : type, { attributes: { "graphql.operation.type": type, "graphql.operation.name": name } }, run);
}
