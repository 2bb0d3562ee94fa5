import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/platform/config.js";
import { buildOpenApi } from "../../src/rest/openapi.js";
import { schema } from "../../src/graphql/schema.js";
import { routes } from "../../src/rest/routes.js";
import { ContractValidator, type Exchange } from "./support/validator.js";

/** The ajv side of the contract suite must catch each kind of drift on its own. */

const validator = new ContractValidator(buildOpenApi(routes, schema, loadConfig({}).publicBaseUrl));

const store = {
  id: "0b6c3c8e-6f3e-4a5e-9d57-2f1c1c9a4b10",
  code: "ABC123",
  name: "Roma",
  slug: "roma",
  logo: null,
  phone: null,
  isActive: true,
  status: "OPEN",
  address: null,
  openingHours: [],
  publicSettings: {},
};

const exchange = (over: Partial<Exchange> & { json?: unknown } = {}): Exchange => ({
  method: "GET",
  path: "/public/v1/store",
  status: 200,
  headers: { "content-type": "application/json; charset=utf-8", "x-request-id": store.id, "x-ratelimit-limit": "100" },
  body: JSON.stringify(over.json ?? store),
  ...over,
});

describe("ContractValidator", () => {
  it("accepts a conforming response", () => {
    expect(validator.check(exchange())).toEqual([]);
  });

  it("rejects a wrong type, a missing required field and an undocumented field", () => {
    const { name: _name, ...rest } = store;
    const problems = validator.check(exchange({ json: { ...rest, isActive: "yes", secretField: 1 } }));
    expect(problems.join("\n")).toMatch(/isActive must be boolean/);
    expect(problems.join("\n")).toMatch(/must have required property 'name'/);
    expect(problems.join("\n")).toMatch(/secretField is not documented/);
  });

  it("rejects undocumented statuses, wrong media types and bad headers", () => {
    expect(validator.check(exchange({ status: 418 }))[0]).toMatch(/status 418 is not documented/);
    expect(validator.check(exchange({ headers: { "content-type": "text/plain", "x-request-id": store.id } }))[0]).toMatch(/content-type text\/plain/);
    expect(validator.check(exchange({ headers: { "content-type": "application/json" } }))[0]).toMatch(/required header X-Request-Id is missing/);
    expect(validator.check(exchange({ headers: { "content-type": "application/json", "x-request-id": store.id, "x-ratelimit-limit": "many" } }))[0]).toMatch(
      /header X-RateLimit-Limit/,
    );
  });

  it("checks error bodies against ProblemDetails, codes included", () => {
    const problem = {
      type: "http://x/errors/FORBIDDEN",
      title: "Forbidden",
      status: 403,
      detail: "no",
      code: "NOT_A_CODE",
      instance: "/public/v1/store",
      requestId: store.id,
      traceId: "abc",
      retryable: false,
    };
    const problems = validator.check(
      exchange({ status: 403, headers: { "content-type": "application/problem+json", "x-request-id": store.id }, json: problem }),
    );
    expect(problems.join("\n")).toMatch(/code must be equal to one of the allowed values/);
  });
});
