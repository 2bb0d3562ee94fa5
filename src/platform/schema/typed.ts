import { initGraphQLTada } from "gql.tada";
import type { introspection } from "./graphql-env.js";

/**
 * `graphql()` for documents run in-process (the REST rows): gql.tada types each document's result and variables
 * from the published schema (graphql-env.d.ts, printed by `npm run print-schema`). DateTime arrives serialized,
 * as its ISO string. Fragments are not masked: a REST body is the whole selection, fragments included.
 */
export const graphql = initGraphQLTada<{
  introspection: introspection;
  scalars: { DateTime: string; JSON: unknown };
  disableMasking: true;
}>();

export type { ResultOf, TadaDocumentNode, VariablesOf } from "gql.tada";
