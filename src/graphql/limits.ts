import { GraphQLError, type ValidationContext } from "graphql";
import type { Plugin } from "graphql-yoga";
import { maxDepthPlugin } from "@escape.tech/graphql-armor-max-depth";
import { costLimitPlugin } from "@escape.tech/graphql-armor-cost-limit";

export interface QueryLimits {
  maxDepth: number;
  maxCost: number;
}

/** Reports a refused document as a validation error that names the limit it hit. */
function refusal(limit: "depth" | "cost", max: number) {
  return (ctx: ValidationContext | null, error: GraphQLError): void => {
    ctx?.reportError(new GraphQLError(error.message.replace(/^Syntax Error: /, ""), { extensions: { code: "INVALID_REQUEST", limit, max } }));
  };
}

/**
 * Depth and cost limits on /graphql (graphql-armor), checked while the document is validated, before anything
 * runs. Introspection is left to the introspection rule (administrators only).
 */
export function useQueryLimits(limits: QueryLimits): Plugin[] {
  return [
    maxDepthPlugin({ n: limits.maxDepth, propagateOnRejection: false, onReject: [refusal("depth", limits.maxDepth)] }),
    costLimitPlugin({ maxCost: limits.maxCost, propagateOnRejection: false, onReject: [refusal("cost", limits.maxCost)] }),
  ];
}
