import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/platform/config.js";
import { LATEST_API_VERSION } from "../../src/platform/versions.js";
import type { OpenApiDocument } from "../../src/rest/openapi-document.js";
import { buildOpenApi, operationIds } from "../../src/rest/openapi.js";
import { schema } from "../../src/graphql/schema.js";
import { routes } from "../../src/rest/routes.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant } from "../helpers/tenants.js";
import { startReceiver, type Receiver } from "../webhooks/receiver.js";
import { CONTRACT_CASES, type CaseContext } from "./cases.js";
import { ROOT, ensureMeshBuilt, loadMesh, meshOperation, type MeshRunner, type MeshSdk, type OperationInput } from "./support/mesh.js";
import { Recorder } from "./support/recorder.js";
import { ContractValidator } from "./support/validator.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  getNamedType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isUnionType,
  parse,
  print,
  validate,
  visit,
  type DocumentNode,
  type GraphQLSchema,
} from "graphql";

/**
 * The contract suite: every operation of the OpenAPI document, driven through the GraphQL Mesh built from the
 * latest version's document (schema/openapi-<latest>.json) against the running REST API. A response that departs from its documented schema
 * fails twice: in the Mesh (types, non-null fields, scalars) and in ajv against the document (every field,
 * header and status, undocumented fields included).
 */

const doc: OpenApiDocument = buildOpenApi(routes, schema, loadConfig({}).publicBaseUrl, LATEST_API_VERSION);
const validator = new ContractValidator(doc);

let app: TestApp;
let recorder: Recorder;
let mesh: MeshRunner;
let meshSchema: GraphQLSchema;
let sdkFor: (context: Record<string, unknown>) => MeshSdk;
let sdkDocuments: Record<string, DocumentNode>;
let ctx: CaseContext;
let receiver: Receiver;

beforeAll(async () => {
  const buildMs = ensureMeshBuilt();
  if (buildMs !== null) console.info(`mesh build: ${buildMs} ms`);
  // The webhook cases deliver to a receiver on 127.0.0.1, which production settings refuse; one SANDBOX
  // store runs every case (setup calls included) within a minute, past the default 100 requests.
  // A client may fetch 5 tokens a minute, so "Retry-After of a 429" reaches the limit in a few (hashed) requests.
  app = await startTestApp({
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    RATE_LIMIT_SANDBOX_STORE: "5000",
    RATE_LIMIT_SANDBOX_APP: "5000",
    RATE_LIMIT_TOKEN_PER_CLIENT: "5",
  });
  receiver = await startReceiver();
  recorder = new Recorder(app.baseUrl);
  await recorder.start();
  process.env.MESH_API_BASE_URL = recorder.baseUrl;
  ({ mesh, schema: meshSchema, sdk: sdkFor, sdkDocuments } = await loadMesh());
  ctx = { app, tenant: await createTenant(app), receiver };
}, 120_000);

afterAll(async () => {
  mesh?.destroy();
  await recorder?.stop();
  await receiver?.close();
  await app?.close();
});

/** The headers of the contract the Mesh must hand over unchanged (`_response.headers`, by lower-case name). */
const CONTRACT_HEADERS = [
  "location",
  "idempotent-replayed",
  "x-request-id",
  "x-ratelimit-limit",
  "x-ratelimit-remaining",
  "x-ratelimit-reset",
  "x-next-cursor",
  "link",
  "retry-after",
];

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

function successStatus(operationId: string): number {
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item)) {
      if (op.operationId === operationId) return Number(Object.keys(op.responses).find((s) => s.startsWith("2")));
    }
  }
  throw new Error(`no operation ${operationId}`);
}

/** The path and query of a GET operation's run, its parameters filled in. */
function filledPath(operationId: string, input: OperationInput): string {
  const path = Object.keys(doc.paths).find((p) => doc.paths[p].get?.operationId === operationId);
  if (!path) throw new Error(`no GET operation ${operationId}`);
  const filled = path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(input.path?.[name] ?? ""));
  const search = new URLSearchParams(Object.entries(input.query ?? {}).map(([k, v]) => [k, String(v)]));
  return `${filled}${search.size ? `?${search}` : ""}`;
}

describe("every operation of the document has a contract case", () => {
  it.each(operationIds(doc))("%s", (operationId) => {
    expect(CONTRACT_CASES[operationId]?.length ?? 0, `operation ${operationId} has no contract case: add one to test/contract/cases.ts`).toBeGreaterThan(0);
  });

  it("no case names an operation the document lacks", () => {
    const known = new Set(operationIds(doc));
    expect(Object.keys(CONTRACT_CASES).filter((id) => !known.has(id))).toEqual([]);
  });
});

const runs = operationIds(doc).flatMap((operationId) => (CONTRACT_CASES[operationId] ?? []).map((c) => ({ operationId, c })));

describe("each case through the Mesh matches the document", () => {
  it.each(runs.map((r) => [`${r.operationId}: ${r.c.name}`, r] as const))("%s", async (_title, { operationId, c }) => {
    const run = (await c.run?.(ctx)) ?? {};
    const { token, anonymous, ...input } = run;
    const expected = c.status ?? successStatus(operationId);
    recorder.take();
    if (anonymous) {
      // The Mesh sends its bearer with every request: a run without any credential (a signed link) goes straight
      // over HTTP, through the recorder, and its exchange is checked against the document all the same.
      await fetch(`${recorder.baseUrl}${filledPath(operationId, input)}`, { headers: input.headers });
      const [exchange] = recorder.take();
      expect(exchange.status, exchange.body.slice(0, 500)).toBe(expected);
      expect(validator.check(exchange)).toEqual([]);
      return;
    }
    const { document, variables } = meshOperation(meshSchema, operationId, input);
    const result = await mesh.execute(document, variables, { token: token === undefined ? ctx.tenant.token : (token ?? "") });
    const exchanges = recorder.take();

    expect(exchanges, "the Mesh made exactly one REST call").toHaveLength(1);
    const [exchange] = exchanges;
    // The Mesh reads a file only from an operation that answers nothing else (its field is then of type File); one
    // that also answers problems is a union, and the Mesh reports its file answer as unexpected. The exchange itself
    // is checked against the document below.
    const file = validator.answersBytes(exchange);
    expect(result.errors?.map((e) => e.message) ?? [], "the Mesh could not read the response as documented").toEqual(
      file ? [`Unexpected response in ${operationId}`] : [],
    );
    expect(validator.find(exchange.method, exchange.path)?.operation.operationId).toBe(operationId);
    expect(exchange.status, exchange.body.slice(0, 500)).toBe(expected);
    expect(validator.check(exchange)).toEqual([]);
    if (file) return;

    // A list answer (a JSON array) is read item by item, each with the same `_response`.
    const data = result.data?.[operationId];
    for (const answer of Array.isArray(data) ? data : [data]) {
      if (!isRecord(answer)) continue;
      expect(answer.__typename === "ProblemResponse", `Mesh read a ${String(answer.__typename)} for HTTP ${exchange.status}`).toBe(expected >= 400);
      if (isRecord(answer.problem)) expect(answer.problem.status).toBe(exchange.status);
      const meta = answer._response;
      if (!isRecord(meta) || !isRecord(meta.headers)) throw new Error(`${operationId}: no _response on the answer`);
      expect(meta.status).toBe(exchange.status);
      expect(meta.method).toBe(exchange.method);
      const headers = meta.headers;
      expect(Object.fromEntries(CONTRACT_HEADERS.map((h) => [h, headers[h]]))).toEqual(
        Object.fromEntries(CONTRACT_HEADERS.map((h) => [h, exchange.headers[h]])),
      );
    }
  });
});

describe("one problem shape in every operation", () => {
  const rootFields = () => [meshSchema.getQueryType(), meshSchema.getMutationType()].flatMap((root) => Object.values(root?.getFields() ?? {}));

  it("every operation answers an error as ProblemResponse { problem: ProblemDetails!, _response }", () => {
    const problem = meshSchema.getType("ProblemDetails");
    const wrapper = meshSchema.getType("ProblemResponse");
    if (!isObjectType(problem) || !isObjectType(wrapper)) throw new Error("the built mesh has no ProblemDetails or ProblemResponse object type");
    expect(Object.fromEntries(Object.values(wrapper.getFields()).map((f) => [f.name, String(f.type)]))).toEqual({
      problem: "ProblemDetails!",
      _response: "ResponseMetadata",
    });
    const documented: unknown = doc.components.schemas.ProblemDetails;
    const properties = isRecord(documented) && isRecord(documented.properties) ? Object.keys(documented.properties) : [];
    expect(Object.keys(problem.getFields()).sort()).toEqual(properties.sort());

    const unions = rootFields().map((field) => ({ field: field.name, type: getNamedType(field.type) }));
    expect(unions.filter(({ type }) => !isUnionType(type)).map((u) => u.field)).toEqual([]);
    for (const { field, type } of unions) {
      const members = isUnionType(type) ? type.getTypes().map((t) => t.name) : [];
      expect(members, field).toContain("ProblemResponse");
      expect(members, field).not.toContain("ProblemDetails");
    }
  });

  it("no field is renamed per operation: none in the schema, none in the SDK's operations (problems, _response, events)", () => {
    const renamed = Object.values(meshSchema.getTypeMap())
      .filter((t) => isObjectType(t) || isInterfaceType(t) || isInputObjectType(t))
      .flatMap((t) => Object.keys(t.getFields()).map((f) => `${t.name}.${f}`))
      .filter((name) => /NonNull$/.test(name));
    expect(renamed).toEqual([]);

    const problemSelections = new Map<string, string[]>();
    const aliased: string[] = [];
    for (const [method, document] of Object.entries(sdkDocuments)) {
      visit(document, {
        Field: (node) => {
          if (node.name.value === "_response") expect(node.alias, `${method} aliases _response`).toBeUndefined();
          if (node.alias && /NonNull$/.test(node.alias.value)) aliased.push(`${method}: ${node.alias.value}`);
        },
        InlineFragment: (node) => {
          if (node.typeCondition?.name.value !== "ProblemResponse") return;
          const printed = print(node.selectionSet);
          problemSelections.set(printed, [...(problemSelections.get(printed) ?? []), method]);
          visit(node, {
            Field: (field) => {
              expect(field.alias, `${method} aliases ${field.name.value} in its problem`).toBeUndefined();
            },
          });
        },
      });
    }
    // Events too: the feed's items and a delivery's payload are StoreEvents, not the WebhookEvent union.
    expect(aliased).toEqual([]);
    expect(Object.keys(sdkDocuments).length).toBeGreaterThanOrEqual(rootFields().length);
    // Every SDK method selects the problem in the same words.
    expect([...problemSelections.values()].map((methods) => methods.length)).toEqual([Object.keys(sdkDocuments).length]);
  });
});

describe("the view follows the latest version", () => {
  it("its configuration reads the latest version's document and sends that version with every request", () => {
    const config = readFileSync(join(ROOT, "mesh/.meshrc.yaml"), "utf8");
    expect(config).toContain(`source: ../schema/openapi-${LATEST_API_VERSION}.json`);
    expect(config).toContain(`Api-Version: "${LATEST_API_VERSION}"`);
  });

  it("answers in it", async () => {
    const sdk = sdkFor({ token: ctx.tenant.token });
    const answer = await sdk.listOrders_query({ limit: 1 });
    const [page] = Object.values(answer);
    expect(isRecord(page) && isRecord(page._response) && isRecord(page._response.headers) ? page._response.headers["api-version"] : null).toBe(
      LATEST_API_VERSION,
    );
    recorder.take();
  });
});

describe("docs/api.md", () => {
  // `graphql mesh` fences are documents for the Mesh's schema; plain `graphql` ones are for the service's /graphql.
  it("its GraphQL Mesh view examples are valid against the built mesh", () => {
    const guide = readFileSync(join(ROOT, "docs/api.md"), "utf8");
    const section = guide.slice(guide.indexOf("## GraphQL Mesh view"), guide.indexOf("\n## ", guide.indexOf("## GraphQL Mesh view") + 1));
    const documents = [...section.matchAll(/```graphql mesh\n([\s\S]*?)```/g), ...section.matchAll(/mesh\.execute\(`([^`]*)`/g)].map((m) => m[1]);
    expect(documents).toHaveLength(2);
    for (const document of documents) expect(validate(meshSchema, parse(document)).map(String), document).toEqual([]);
  });
});

describe("each answer's status and headers through `_response`", () => {
  type Answer = Record<string, unknown> & { _response: { status: number; headers: Record<string, string> } };

  /** The one result of an SDK call (`{ <operationId>: answer }`), its `_response` checked. */
  function answerOf(result: Record<string, unknown>): Answer {
    const [answer] = Object.values(result);
    const first = Array.isArray(answer) ? answer[0] : answer;
    if (!isRecord(first) || !isRecord(first._response) || !isRecord(first._response.headers)) throw new Error(`no _response in ${JSON.stringify(result)}`);
    const headers = Object.fromEntries(Object.entries(first._response.headers).map(([name, value]) => [name, String(value)]));
    return { ...first, _response: { status: Number(first._response.status), headers } };
  }

  /** The ids of a page's items. */
  const itemIds = (page: Answer): unknown[] => (Array.isArray(page.data) ? page.data.map((item: unknown) => (isRecord(item) ? item.id : undefined)) : []);

  it("Location of a created customer", async () => {
    const sdk = sdkFor({ token: ctx.tenant.token });
    const created = answerOf(await sdk.createCustomer_mutation({ input: { name: "Heloísa Cabral" } }));
    expect(created._response.status).toBe(201);
    expect(created._response.headers.location).toMatch(new RegExp(`/public/v1/customers/${String(created.id)}$`));
    recorder.take();
  });

  it("Idempotent-Replayed on a replayed POST", async () => {
    const sdk = sdkFor({ token: ctx.tenant.token });
    const variables = { Idempotency_Key: randomUUID(), input: { name: "Caio Repetido" } };
    const first = answerOf(await sdk.createCustomer_mutation(variables));
    const replayed = answerOf(await sdk.createCustomer_mutation(variables));
    expect(first._response.headers["idempotent-replayed"]).toBeUndefined();
    expect(replayed._response.headers["idempotent-replayed"]).toBe("true");
    expect(replayed.id).toBe(first.id);
    expect(replayed._response.headers.location).toBe(first._response.headers.location);
    recorder.take();
  });

  it("X-RateLimit-Remaining and X-Next-Cursor of a list page, and the next page through that cursor", async () => {
    const tenant = await createTenant(app);
    const endpoint = await call<{ id: string }>(app, "POST", "/public/v1/webhooks", {
      token: tenant.token,
      body: { url: receiver.url("/mesh/headers"), events: ["order.created"] },
    });
    for (let i = 0; i < 2; i++) expect((await call(app, "POST", `/public/v1/webhooks/${endpoint.body.id}/test`, { token: tenant.token })).status).toBe(200);

    const sdk = sdkFor({ token: tenant.token });
    const page = answerOf(await sdk.listWebhookDeliveries_query({ endpointId: endpoint.body.id, limit: 1 }));
    const { headers } = page._response;
    expect(Number(headers["x-ratelimit-limit"])).toBeGreaterThan(0);
    expect(Number(headers["x-ratelimit-remaining"])).toBeLessThan(Number(headers["x-ratelimit-limit"]));
    expect(headers["x-next-cursor"]).toMatch(/.+/);
    expect(page.pagination).toEqual({ hasMore: true, nextCursor: headers["x-next-cursor"] });
    const next = await sdk.listWebhookDeliveries_query({ endpointId: endpoint.body.id, limit: 1, cursor: headers["x-next-cursor"] });
    const last = answerOf(next);
    expect(itemIds(last)).toHaveLength(1);
    expect(itemIds(last)).not.toEqual(itemIds(page));
    expect(last._response.headers["x-next-cursor"]).toBeUndefined();
    expect(Number(last._response.headers["x-ratelimit-remaining"])).toBe(Number(headers["x-ratelimit-remaining"]) - 1);
    recorder.take();
  });

  it("Retry-After of a 429", async () => {
    const tenant = await createTenant(app);
    const sdk = sdkFor({ token: "" });
    const input = { grant_type: "client_credentials", client_id: tenant.clientId, client_secret: tenant.clientSecret };
    // The token endpoint's own limit per client_id (5 a minute here; createTenant took one): the 5th call is refused.
    let answer = answerOf(await sdk.createToken_mutation({ input }));
    for (let i = 0; i < 5 && answer._response.status !== 429; i++) answer = answerOf(await sdk.createToken_mutation({ input }));
    expect(answer._response.status).toBe(429);
    expect(answer.problem).toMatchObject({ status: 429, code: "RATE_LIMIT_EXCEEDED", retryable: true });
    expect(Number(answer._response.headers["retry-after"])).toBeGreaterThan(0);
    recorder.take();
  });

  it("an error: the problem under `problem`, its status and X-Request-Id under `_response`", async () => {
    const sdk = sdkFor({ token: ctx.tenant.token });
    const answer = answerOf(await sdk.getCustomerById_query({ id: randomUUID() }));
    if (!isRecord(answer.problem)) throw new Error(`not a problem: ${JSON.stringify(answer)}`);
    expect(answer.problem).toMatchObject({ status: 404, code: "NOT_FOUND" });
    expect(answer._response.status).toBe(404);
    expect(answer._response.headers["x-request-id"]).toBe(answer.problem.requestId);
    recorder.take();
  });
});

describe("the typed Mesh SDK", () => {
  it("has a method per operation and reads the store with the context's token", async () => {
    const sdk = sdkFor({ token: ctx.tenant.token });
    recorder.take();
    for (const id of operationIds(doc))
      expect(
        Object.keys(sdk).some((m) => m.startsWith(`${id}_`)),
        id,
      ).toBe(true);
    const result = (await sdk.getStore_query()) as { getStore: { id?: string } };
    expect(result.getStore.id).toBe(ctx.tenant.storeId);
    expect(recorder.take().map((e) => e.status)).toEqual([200]);
  });
});
