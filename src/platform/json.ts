/** A JSON Schema as this code builds and reads it: route rows, validators and the OpenAPI document share it. */
export type JsonSchema = Record<string, unknown>;

export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
