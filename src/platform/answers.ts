import type { TadaDocumentNode } from "./schema/typed.js";
import type { ApiVersion } from "./versions.js";

/**
 * The public API's answers outside a request: what a REST route's operation returns and how its body reads in an API
 * version, for work that must answer exactly as the API does without an HTTP request (a bulk export writes each
 * object as its GET-by-id route answers it). Built where the GraphQL schema and the route table are (src/app.ts), on
 * first use.
 */
export interface PublicAnswers {
  /**
   * Runs a document of the service's GraphQL schema in `ctx`, as a REST route runs its own; its first error is thrown.
   * `ctx` is a request context (createContext in ./schema/context.ts, which imports the services this is one of).
   */
  run<Result, Variables>(document: TadaDocumentNode<Result, Variables>, variables: Variables, ctx: object): Promise<Result>;
  /** A success body of the REST operation `operationId` (the newest version's shape) as the API answers it in `version`. */
  render(version: ApiVersion, operationId: string, body: unknown): Promise<unknown>;
}

/**
 * PublicAnswers built by `load` on first use: a process that never answers outside a request (the admin CLI, an API
 * without a worker) never loads what they need (the schema and every route's validators, about a CPU-second).
 */
export function onFirstUse(load: () => Promise<PublicAnswers>): PublicAnswers {
  let loaded: Promise<PublicAnswers> | null = null;
  const answers = () => {
    loaded ??= load();
    return loaded;
  };
  return {
    run: async (document, variables, ctx) => (await answers()).run(document, variables, ctx),
    render: async (version, operationId, body) => (await answers()).render(version, operationId, body),
  };
}
