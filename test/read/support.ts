import { Ajv } from "ajv";
import * as addFormatsModule from "ajv-formats";
import { expect } from "vitest";
import { routes } from "../../src/rest/routes.js";
import { buildOpenApi } from "../../src/rest/openapi.js";
import { schema } from "../../src/graphql/schema.js";
import { call, type ApiResponse } from "../helpers/tenants.js";
import type { TestApp } from "../helpers/app.js";

const addFormats = addFormatsModule.default as unknown as (ajv: Ajv) => Ajv;
// Default options, as a partner's validator runs: response schemas need no float tolerance (money has no multipleOf).
const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));

const openApi = buildOpenApi(routes, schema, "http://api.test.local");

/** Asserts a response body against the JSON schema its route publishes in the OpenAPI document. */
export function expectResponseSchema(operationId: string, body: unknown): void {
  const route = routes.find((r) => r.operationId === operationId);
  const success = route && openApi.paths[route.path][route.method.toLowerCase()].responses[String(route.status)];
  const published = (success?.content as { "application/json"?: { schema: Record<string, unknown> } } | undefined)?.["application/json"]?.schema;
  if (!published) throw new Error(`no response schema for ${operationId}`);
  // The body's schema refers to components as #/components/schemas/<Name>: give it the document's components.
  const validate = ajv.compile({ ...published, components: openApi.components });
  const ok = validate(body);
  expect(ok ? [] : validate.errors).toEqual([]);
}

export function expectProblem(res: ApiResponse, status: number, code: string, field?: string): void {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  expect(res.body).toMatchObject({ status, code });
  if (field) expect((res.body as { errors?: { field: string }[] }).errors?.map((e) => e.field)).toContain(field);
}

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** At most two decimals, as a JSON number. */
export function expectMoney(value: unknown): void {
  expect(typeof value).toBe("number");
  expect(String(value)).toMatch(/^-?\d+(\.\d{1,2})?$/);
}

export interface PageBody<T = Record<string, unknown>> {
  data: (T & { id: string })[];
  pagination: { hasMore: boolean; cursor: string | null; nextCursor: string | null };
}

/**
 * Follows nextCursor to the end of a list and returns every item in order. `between` runs after each page
 * (e.g. to insert rows while a partner is paging).
 */
export async function walk<T = Record<string, unknown>>(
  app: TestApp,
  token: string,
  path: string,
  between?: (page: number) => Promise<void>,
): Promise<(T & { id: string })[]> {
  const items: (T & { id: string })[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1000; page++) {
    const sep = path.includes("?") ? "&" : "?";
    const res: ApiResponse<PageBody<T>> = await call<PageBody<T>>(app, "GET", cursor ? `${path}${sep}cursor=${cursor}` : path, { token });
    expect(res.status).toBe(200);
    const { data, pagination } = res.body;
    items.push(...data);
    expect(pagination.cursor).toBe(pagination.nextCursor);
    if (!pagination.hasMore) {
      expect(pagination.nextCursor).toBeNull();
      return items;
    }
    expect(pagination.nextCursor).toBe(data[data.length - 1].id);
    cursor = pagination.nextCursor;
    if (between) await between(page);
  }
  throw new Error("the list never ended");
}
