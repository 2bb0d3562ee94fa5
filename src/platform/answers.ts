import type { TadaDocumentNode } from "./schema/typed.js";
import type { ApiVersion } from "./versions.js";

/**
 * The public API's answers outside a request: what a REST route's operation returns and how its body reads in an API
 * version, for work that must answer exactly as the API does without an HTTP request (a bulk export writes each
 * object as its GET-by-id route answers it). Built where the GraphQL schema and the route table are (src/app.ts).
 */
export interface PublicAnswers {
  /**
   * Runs a document of the service's GraphQL schema in `ctx`, as a REST route runs its own; its first error is thrown.
   * `ctx` is a request context (createContext in ./schema/context.ts, which imports the services this is one of).
   */
  run<Result, Variables>(document: TadaDocumentNode<Result, Variables>, variables: Variables, ctx: object): Promise<Result>;
  /** A success body of the REST operation `operationId` (the newest version's shape) as the API answers it in `version`. */
  render(version: ApiVersion, operationId: string, body: unknown): unknown;
}
