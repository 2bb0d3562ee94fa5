import type { GraphQLSchema } from "graphql";
import type { PublicAnswers } from "../platform/answers.js";
import type { Route } from "../platform/route.js";
import type { ApiVersion } from "../platform/versions.js";
import type { TadaDocumentNode } from "../platform/schema/typed.js";
import type { Context } from "../platform/schema/context.js";
import { VersionedResponses } from "../modules/versions/render.js";
import { runDocument } from "./execute.js";
import { buildCodeOpenApi } from "./openapi.js";
import type { OpenApiDocument } from "./openapi-document.js";

/**
 * The REST façade's execution and version rendering for work outside a request: the same `runDocument` and the same
 * VersionedResponses the router answers with, each version's renderer built on first need from the document of the
 * code's shape (as the router builds its own).
 */
export function publicAnswers(schema: GraphQLSchema, routes: Route[], baseUrl: string): PublicAnswers {
  let code: OpenApiDocument | null = null;
  const renderers = new Map<ApiVersion, VersionedResponses>();
  return {
    run: async <Result, Variables>(document: TadaDocumentNode<Result, Variables>, variables: Variables, ctx: Context): Promise<Result> => {
      // gql.tada typed the document's variables and result against the published schema, which the contract test keeps
      // equal to this one (as the router's rows are).
      const data = await runDocument(schema, document, variables as Record<string, unknown>, ctx);
      return data as Result;
    },
    render: async (version, operationId, body) => {
      let renderer = renderers.get(version);
      if (!renderer) {
        code ??= buildCodeOpenApi(routes, schema, baseUrl);
        renderer = new VersionedResponses(code, version);
        renderers.set(version, renderer);
      }
      return renderer.body(operationId, { body, query: {}, headers: {} });
    },
  };
}
