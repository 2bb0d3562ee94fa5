import type { ErrorCode } from "./errors.js";

/**
 * What the OpenAPI document's examples share: their types and one pizzeria's data (store PZ7K2M9QXA, "Bella Napoli
 * Pizzaria" in São Paulo, amounts in BRL), so a reader can follow one order from the token to the webhook. Each
 * domain keeps its operations' examples beside its routes (src/modules/<domain>/examples.ts); the REST adapter
 * puts them in the document, and test/contract/examples.test.ts validates every one against its schema.
 */

/** An OpenAPI Example Object. */
export interface Example {
  summary: string;
  value: unknown;
}

/** A problem+json body without the parts every problem shares (type, title, status, retryable, ids). */
export interface ProblemExample {
  summary: string;
  code: ErrorCode;
  detail: string;
  instance: string;
  errors?: Record<string, unknown>[];
  /** A token endpoint's OAuth 2.0 error code (its `error_description` is the detail). */
  error?: string;
}

export interface OperationExamples {
  /** Named application/json request bodies. */
  request?: Record<string, Example>;
  /** Named success bodies (none for 204). */
  response?: Record<string, Example>;
  /** Named bodies of the route's other success answers, by status. */
  otherResponses?: Record<number, Record<string, Example>>;
  /** A client error typical of the operation, shown on that status. */
  problem: ProblemExample;
}

export const STORE_ID = "5f0c9a3e-2b7d-4c1a-9e55-0d3b8f6a4c21";
export const STORE_CODE = "PZ7K2M9QXA";
export const ORDER_ID = "8c1e4b7a-3f2d-4e9a-b6c5-1d7f0a2e9b34";
export const PICKUP_ORDER_ID = "c4a2e8f1-9b3d-4f7e-8a6c-2e5d1b9f7a03";
export const CUSTOMER_ID = "2d9f6a1c-7b3e-4f58-a0c4-e8b15d3c7f62";
export const NEW_CUSTOMER_ID = "7e3b1d9a-4c6f-4a2e-b8d5-9f1a3c7e5b20";
export const PRODUCT = {
  margherita: "f84faa4c-a7be-4077-9579-42a2e66c31d1",
  pepperoni: "bfb9139d-9991-46c3-a24b-ad23452d2f00",
  burger: "45cc801e-1bd7-4494-aa49-b255371bc958",
  cola: "6d2f8b4e-1a7c-4e3d-9b5f-0c8a2e6d4f17",
};
export const ENDPOINT_ID = "b1b72eba-6f97-44af-8dfb-fad5369a528d";
export const DELIVERY_ID = "76001c39-2d68-4fdf-8a84-e52a7d16b087";
export const EVENT_ID = "96d280a2-ddeb-43db-bd67-2cb266c90f77";
export const EXPORT_ID = "4be0c3a1-5f0e-4e43-9a8d-2f7c0b6e1d21";
export const WEBHOOK_URL = "https://erp.example.com/webhooks/bella-napoli";
/** An id nothing has, for the not-found examples. */
export const UNKNOWN_ID = "0b6c3c8e-6f3e-4a5e-9d57-2f1c1c9a4b10";

export const T = {
  created: "2025-03-01T18:30:00.000Z",
  confirmed: "2025-03-01T18:31:12.480Z",
  customer: "2024-11-09T20:14:05.000Z",
  delivered: "2025-03-01T18:30:01.152Z",
};

/** The delivery address of the examples, and of the sandbox's delivery orders, so a sandbox order looks like the documented one. */
export const ADDRESS = {
  street: "Rua Augusta",
  number: "1500",
  neighborhood: "Consolação",
  city: "São Paulo",
  state: "SP",
  postalCode: "01304-001",
  complement: "Apto 42",
};

export const page = (data: unknown[], next: string | null) => ({ data, pagination: { hasMore: next !== null, nextCursor: next } });
export const one = (summary: string, value: unknown): Record<string, Example> => ({ default: { summary, value } });
export const notFound = (what: string, path: string, id: string): ProblemExample => ({
  summary: `No ${what} with this id in the token's store`,
  code: "NOT_FOUND",
  detail: `No ${what} with id ${id} exists for this store. Check the id; resources of other stores are never visible.`,
  instance: path.replace(/\{\w+\}/, id),
});
