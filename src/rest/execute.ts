import { execute, validate, type DocumentNode, type GraphQLSchema } from "graphql";
import { ApiError } from "../platform/errors.js";
import type { Context } from "../platform/schema/context.js";
import { traceOperation } from "../platform/tracing/graphql.js";
import { tracer } from "../platform/tracing/tracer.js";

/**
 * Validates a route's GraphQL document once, at start; a broken document stops the process. tsc typed it
 * against schema/schema.graphql, which test/contract/artefacts.test.ts keeps equal to this schema.
 */
export function checkDocument(schema: GraphQLSchema, document: DocumentNode, name: string): void {
  const errors = validate(schema, document);
  if (errors.length) throw new Error(`GraphQL document of ${name} is invalid: ${errors.map((e) => e.message).join("; ")}`);
}

/**
 * What answers a route once its input is valid: `runDocument` on the route's GraphQL document, always, in the
 * service. It is a parameter only so the read benchmark's baseline (b) can answer the same routes through the same
 * pipeline with direct Prisma calls, which measures what GraphQL costs and nothing else.
 */
export type OperationRunner = (
  operation: { operationId: string; document: DocumentNode; variables: Record<string, unknown> },
  contextValue: Context,
) => Promise<Record<string, unknown>>;

/**
 * Runs a prepared document in-process. The first error decides the response: an ApiError keeps its code,
 * anything else is logged by the caller and becomes a 500 without leaking its message.
 */
export async function runDocument(
  schema: GraphQLSchema,
  document: DocumentNode,
  variableValues: Record<string, unknown>,
  contextValue: Context,
): Promise<Record<string, unknown>> {
  const run = async () => execute({ schema, document, variableValues, contextValue });
  const result = await (tracer.enabled ? traceOperation(document, undefined, run) : run());
  const first = result.errors?.[0];
  if (first) {
    const original = first.originalError;
    if (original instanceof ApiError) throw original;
    throw original ?? first;
  }
  return (result.data ?? {}) as Record<string, unknown>;
}
