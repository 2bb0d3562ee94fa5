import {
  getNamedType,
  getNullableType,
  getOperationAST,
  getVariableValues,
  GraphQLError,
  isListType,
  isObjectType,
  type DocumentNode,
  type GraphQLSchema,
  type ValidationContext,
} from "graphql";
import type { Plugin } from "graphql-yoga";
import { maxDepthPlugin } from "@escape.tech/graphql-armor-max-depth";
import { getComplexity, type ComplexityEstimator } from "graphql-query-complexity";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../platform/schema/pagination.js";

export interface QueryLimits {
  maxDepth: number;
  maxCost: number;
}

/** Rows assumed of a list field without a `limit` argument (an order's items, a product's variations). */
export const UNLIMITED_LIST_ROWS = 10;

/**
 * The return types of paged fields (those with a `limit` argument that answer a page, not a list): the list
 * inside such a page (its `data`) is already counted by the page's limit.
 */
function pageTypes(schema: GraphQLSchema): Set<string> {
  const pages = new Set<string>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type)) continue;
    for (const field of Object.values(type.getFields())) {
      if (field.args.some((a) => a.name === "limit") && !isListType(getNullableType(field.type))) pages.add(getNamedType(field.type).name);
    }
  }
  return pages;
}

/**
 * Every field costs 1 plus its selection's cost times the rows it can answer: `limit` for a field with a `limit`
 * argument (default DEFAULT_PAGE_SIZE; above MAX_PAGE_SIZE the field refuses the request anyway),
 * UNLIMITED_LIST_ROWS for any other list, 1 otherwise. graphql-armor's cost limit counts a list's selection once
 * whatever its size, so 40 aliased pages of 100 orders cost it no more than 40 single orders.
 */
function rowsEstimator(schema: GraphQLSchema): ComplexityEstimator {
  const pages = pageTypes(schema);
  return ({ type, field, args, childComplexity }) => {
    // Introspection (administrators only) answers the schema, whose size the schema bounds.
    if (field.name === "__schema" || field.name === "__type") return 1;
    let rows = 1;
    if (field.args.some((a) => a.name === "limit")) {
      const limit: unknown = args.limit;
      rows = typeof limit === "number" ? Math.min(Math.max(limit, 1), MAX_PAGE_SIZE) : DEFAULT_PAGE_SIZE;
    } else if (isListType(getNullableType(field.type)) && !pages.has(type.name)) {
      rows = UNLIMITED_LIST_ROWS;
    }
    return 1 + rows * childComplexity;
  };
}

const estimators = new WeakMap<GraphQLSchema, ComplexityEstimator>();

/** The cost of running `operationName` of `document` with these variables (the estimator above). */
export function queryCost(schema: GraphQLSchema, document: DocumentNode, variables: Record<string, unknown> = {}, operationName?: string): number {
  let estimator = estimators.get(schema);
  if (!estimator) {
    estimator = rowsEstimator(schema);
    estimators.set(schema, estimator);
  }
  return getComplexity({ schema, query: document, variables, operationName, estimators: [estimator] });
}

/** Reports a refused document as a validation error that names the limit it hit. */
function refusal(limit: "depth", max: number) {
  return (ctx: ValidationContext | null, error: GraphQLError): void => {
    ctx?.reportError(new GraphQLError(error.message.replace(/^Syntax Error: /, ""), { extensions: { code: "INVALID_REQUEST", limit, max } }));
  };
}

/**
 * Refuses, before anything runs, an operation whose cost is above `maxCost`. It is checked when the operation
 * is about to execute rather than during validation because the cost depends on the variables (`limit: $limit`)
 * and Yoga caches validation results by document alone.
 */
function useCostLimit(maxCost: number): Plugin {
  return {
    onExecute: ({ args, setResultAndStopExecution }) => {
      const operation = getOperationAST(args.document, args.operationName);
      const variables = args.variableValues ?? {};
      // Without one operation to run, or with variables that do not fit it, execution refuses the request itself.
      if (!operation || getVariableValues(args.schema, operation.variableDefinitions ?? [], variables).errors) return;
      let cost: number;
      try {
        cost = queryCost(args.schema, args.document, variables, args.operationName ?? undefined);
      } catch (error) {
        // graphql-query-complexity stops at 10,000 selections (fragments counted each time they are spread).
        const message = error instanceof Error ? error.message : String(error);
        setResultAndStopExecution({ errors: [new GraphQLError(message, { extensions: { code: "INVALID_REQUEST", limit: "cost", max: maxCost } })] });
        return;
      }
      if (cost <= maxCost) return;
      const error = new GraphQLError(`Query cost ${cost} exceeds the limit of ${maxCost}.`, {
        extensions: { code: "INVALID_REQUEST", limit: "cost", max: maxCost, cost },
      });
      setResultAndStopExecution({ errors: [error] });
    },
  };
}

/**
 * Depth (graphql-armor, while the document is validated) and cost limits on /graphql, both before anything
 * runs. Introspection is left to the introspection rule (administrators only).
 */
export function useQueryLimits(limits: QueryLimits): Plugin[] {
  return [maxDepthPlugin({ n: limits.maxDepth, propagateOnRejection: false, onReject: [refusal("depth", limits.maxDepth)] }), useCostLimit(limits.maxCost)];
}
