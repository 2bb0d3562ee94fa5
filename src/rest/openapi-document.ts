import type { JsonSchema } from "../platform/json.js";

/** The shape of the OpenAPI 3.1 document `buildOpenApi` (./openapi.ts) writes and ./openapi-attach.ts adds examples to. */
export interface OpenApiOperation {
  operationId: string;
  parameters?: JsonSchema[];
  requestBody?: JsonSchema;
  responses: Record<string, JsonSchema>;
  [key: string]: unknown;
}

export interface OpenApiDocument {
  openapi: "3.1.0";
  info: JsonSchema;
  servers: JsonSchema[];
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, OpenApiOperation>>;
  webhooks: Record<string, JsonSchema>;
  components: {
    schemas: Record<string, JsonSchema>;
    parameters: Record<string, JsonSchema>;
    headers: Record<string, JsonSchema>;
    responses: Record<string, JsonSchema>;
    securitySchemes: Record<string, JsonSchema>;
  };
}
