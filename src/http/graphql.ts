import type { GraphQLSchema } from "graphql";
import { GraphQLError } from "graphql";
import { createYoga, isAsyncIterable, processRegularResult, type Plugin, type YogaServerInstance } from "graphql-yoga";
import { graphiqlRenderer } from "./graphiql.js";
import { useDisableIntrospection } from "@graphql-yoga/plugin-disable-introspection";
import { ApiError, ERROR_CATALOG, invalidRequest } from "../platform/errors.js";
import { apiErrorOf } from "./problem.js";
import type { Principal } from "../platform/auth/principal.js";
import { createContext, type Context } from "../platform/schema/context.js";
import { useQueryLimits } from "../graphql/limits.js";
import { type KeptDocuments, useDocumentLimits } from "../graphql/documents.js";
import { pacedRootFields } from "../graphql/paced.js";
import { operationInputViolations } from "../graphql/input.js";
import { useSuggestionsForAdminsOnly } from "../graphql/suggestions.js";
import { useReadReplicas } from "../graphql/read-replicas.js";
import type { Services } from "../platform/services.js";
import type { WaitOutside } from "../platform/outside.js";
import { tracer } from "../platform/tracing/tracer.js";
import { useOperationSpans } from "../graphql/tracing.js";

export interface GraphqlServerContext {
  principal: Principal;
  requestId: string;
  /** What a resolver waits on outside our database runs without the request's admission slot (see admitted, server.ts). */
  waitOutside?: WaitOutside;
}

/** Codes graphql-yoga gives its own refusals of a request; ours (a query limit's INVALID_REQUEST) stay. */
const YOGA_REQUEST_CODES = new Set<unknown>([undefined, "GRAPHQL_PARSE_FAILED", "GRAPHQL_VALIDATION_FAILED", "BAD_USER_INPUT"]);

/**
 * A request GraphQL refuses before any resolver runs (a syntax error, an unknown field, a value of the wrong type)
 * carries INVALID_REQUEST, the code REST answers a malformed request with.
 */
function asInvalidRequest(error: GraphQLError): GraphQLError {
  if (!YOGA_REQUEST_CODES.has(error.extensions.code)) return error;
  const { nodes, source, positions, path, originalError } = error;
  return new GraphQLError(error.message, {
    nodes,
    source,
    positions,
    path,
    originalError,
    extensions: { ...error.extensions, code: "INVALID_REQUEST", status: ERROR_CATALOG.INVALID_REQUEST.status },
  });
}

/**
 * Turns an error into a GraphQL error whose extensions carry the code and status REST would answer; its headers
 * (Retry-After) go on the HTTP response.
 */
export function graphqlErrorOf(error: unknown, requestId: string, log: Services["log"]): GraphQLError {
  const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
  const known = apiErrorOf(original);
  if (known) {
    if (!(original instanceof ApiError)) log.warn({ err: original, requestId }, "database unavailable: answered SERVICE_UNAVAILABLE");
    return new GraphQLError(known.detail, {
      extensions: {
        code: known.code,
        status: ERROR_CATALOG[known.code].status,
        errors: known.violations,
        ...(known.headers ? { http: { headers: known.headers } } : {}),
      },
    });
  }
  // graphql's own errors about the request, including a variable a scalar refused (an Int out of range, a
  // DateTime in year 0), are written for the client.
  if (error instanceof GraphQLError && original instanceof GraphQLError) return asInvalidRequest(error);
  log.error({ err: original, requestId }, "unexpected GraphQL error");
  return new GraphQLError("Unexpected error.", { extensions: { code: "INTERNAL_SERVER_ERROR", requestId } });
}

/** A document that fails validation (a literal of the wrong type, an unknown field) never reaches maskError. */
function useInvalidRequestCode(): Plugin {
  return {
    onValidate:
      () =>
      ({ result, setResult }) => {
        if (result.length > 0) setResult(result.map((e) => (e instanceof GraphQLError ? asInvalidRequest(e) : e)));
      },
  };
}

/**
 * An operation carrying a literal nested deeper than JSON_MAX_DEPTH or a string the database cannot store never
 * runs: it answers INVALID_REQUEST naming it.
 */
function useStorableText(log: Services["log"], maxDepth: number): Plugin {
  return {
    onExecute: ({ args, setResultAndStopExecution }) => {
      const violations = operationInputViolations(args.document, args.variableValues, maxDepth);
      if (violations.length === 0) return;
      const error = invalidRequest(`The operation failed validation: ${violations.map((v) => v.message).join("; ")}.`, violations);
      setResultAndStopExecution({ errors: [graphqlErrorOf(error, "", log)] });
    },
  };
}

/**
 * A live stream refused before it starts for a reason that passes (the caps on streams: 503 or 429) answers that
 * status with its Retry-After as a plain JSON response: over Server-Sent Events it would be a 200 whose only
 * event is the error, and the header that says when to come back would be lost.
 */
function useRefusedStreamStatus(): Plugin {
  return {
    onResultProcess: ({ request, result, setResult, setResultProcessor }) => {
      if (isAsyncIterable(result) || Array.isArray(result) || !request.headers.get("accept")?.includes("text/event-stream")) return;
      const refusal = result.errors?.find((e) => e.extensions?.http !== undefined);
      const status = refusal?.extensions.status;
      if (!refusal || typeof status !== "number") return;
      const errors = result.errors?.map((e) =>
        e === refusal ? new GraphQLError(e.message, { extensions: { ...e.extensions, http: { ...(e.extensions.http as object), status } } }) : e,
      );
      setResult({ ...result, errors });
      setResultProcessor(processRegularResult, "application/json");
    },
  };
}

/**
 * The /graphql endpoint: GraphiQL on GET, the same schema the REST façade runs, introspection and "Did you
 * mean" suggestions for admins only.
 */
export function createGraphqlServer(services: Services, schema: GraphQLSchema, documents: KeptDocuments): YogaServerInstance<GraphqlServerContext, Context> {
  const { config } = services;
  return createYoga<GraphqlServerContext, Context>({
    schema: pacedRootFields(schema, config.GRAPHQL_READS_IN_FLIGHT),
    graphqlEndpoint: "/graphql",
    landingPage: false,
    graphiql: { title: "Partner platform GraphQL", headers: JSON.stringify({ Authorization: "Bearer <admin key or partner token>" }) },
    renderGraphiQL: graphiqlRenderer(),
    logging: false,
    // useDocumentLimits keeps parsed documents instead, bounded in bytes and only those accepted.
    parserAndValidationCache: false,
    context: ({ principal, requestId, waitOutside }) => createContext(services, principal, requestId, null, waitOutside),
    maskedErrors: {
      maskError: (error, _message) => {
        const ctx = (error as GraphQLError).extensions?.requestId;
        return graphqlErrorOf(error, typeof ctx === "string" ? ctx : "", services.log);
      },
    },
    plugins: [
      useDisableIntrospection({ isDisabled: (_req, ctx) => (ctx.principal as Principal | undefined)?.kind !== "admin" }),
      ...useQueryLimits({ maxDepth: config.GRAPHQL_MAX_DEPTH, maxCost: config.GRAPHQL_MAX_COST }),
      useStorableText(services.log, config.JSON_MAX_DEPTH),
      useInvalidRequestCode(),
      useSuggestionsForAdminsOnly(),
      useRefusedStreamStatus(),
      useDocumentLimits(
        {
          maxBytes: config.GRAPHQL_MAX_DOCUMENT_BYTES,
          maxTokens: config.GRAPHQL_MAX_TOKENS,
          // Room for every selection level and every literal level accepted, so only documents refused anyway are.
          maxNesting: config.GRAPHQL_MAX_DEPTH + config.JSON_MAX_DEPTH + 2,
        },
        documents,
      ),
      useReadReplicas(services.reads),
      // Added only when tracing is on, so a request without it pays nothing.
      ...(tracer.enabled ? [useOperationSpans()] : []),
    ],
  });
}
