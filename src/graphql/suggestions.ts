import { GraphQLError, type ExecutionResult } from "graphql";
import type { Plugin } from "graphql-yoga";
import type { Principal } from "../platform/auth/principal.js";

/** graphql's hint at the end of a message: `Did you mean "applications"?`, `Did you mean the enum value "CASH"?`. */
const SUGGESTION = /\s*Did you mean\b[^?]*\?$/;

function withoutSuggestion(error: GraphQLError): GraphQLError {
  const message = error.message.replace(SUGGESTION, "");
  if (message === error.message) return error;
  const { nodes, source, positions, path, originalError, extensions } = error;
  return new GraphQLError(message, { nodes, source, positions, path, originalError, extensions });
}

/**
 * graphql's "Did you mean …?" hints name fields, arguments, types and enum values of the whole schema, the
 * administrators' included: only administrators get them. They go from the result rather than from validation,
 * whose results Yoga caches by document for every caller; errors are replaced, never changed, so a cached
 * result keeps its hints for the next administrator.
 */
export function useSuggestionsForAdminsOnly(): Plugin<Record<string, unknown>, { principal: Principal }> {
  return {
    onExecutionResult: ({ result, setResult, context }) => {
      if (context.principal.kind === "admin" || !result || Symbol.asyncIterator in result) return;
      const errors = result.errors;
      if (!errors?.length) return;
      const stripped: ExecutionResult = { ...result, errors: errors.map(withoutSuggestion) };
      setResult(stripped);
    },
  };
}
