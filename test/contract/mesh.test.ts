import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/platform/config.js";
import { buildOpenApi, operationIds, type OpenApiDocument } from "../../src/rest/openapi.js";
import { schema } from "../../src/graphql/schema.js";
import { routes } from "../../src/rest/routes.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createTenant } from "../helpers/tenants.js";
import { startReceiver, type Receiver } from "../webhooks/receiver.js";
import { CONTRACT_CASES, type CaseContext } from "./cases.js";
import { ensureMeshBuilt, loadMesh, meshOperation, type MeshRunner, type MeshSdk } from "./support/mesh.js";
import { Recorder } from "./support/recorder.js";
import { ContractValidator } from "./support/validator.js";
import type { GraphQLSchema } from "graphql";

/**
 * The contract suite: every operation of the OpenAPI document, driven through the GraphQL Mesh built from
 * schema/openapi.json against the running REST API. A response that departs from its documented schema
 * fails twice: in the Mesh (types, non-null fields, scalars) and in ajv against the document (every field,
 * header and status, undocumented fields included).
 */

const doc: OpenApiDocument = buildOpenApi(routes, schema, loadConfig({}).publicBaseUrl);
const validator = new ContractValidator(doc);

let app: TestApp;
let recorder: Recorder;
let mesh: MeshRunner;
let meshSchema: GraphQLSchema;
let sdkFor: (context: Record<string, unknown>) => MeshSdk;
let ctx: CaseContext;
let receiver: Receiver;

beforeAll(async () => {
  const buildMs = ensureMeshBuilt();
  if (buildMs !== null) console.info(`mesh build: ${buildMs} ms`);
  // The webhook cases deliver to a receiver on 127.0.0.1, which production settings refuse; one SANDBOX
  // store runs every case (setup calls included) within a minute, past the default 100 requests.
  app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", RATE_LIMIT_SANDBOX_STORE: "5000", RATE_LIMIT_SANDBOX_APP: "5000" });
  receiver = await startReceiver();
  recorder = new Recorder(app.baseUrl);
  await recorder.start();
  process.env.MESH_API_BASE_URL = recorder.baseUrl;
  ({ mesh, schema: meshSchema, sdk: sdkFor } = await loadMesh());
  ctx = { app, tenant: await createTenant(app), receiver };
}, 120_000);

afterAll(async () => {
  mesh?.destroy();
  await recorder?.stop();
  await receiver?.close();
  await app?.close();
});

function successStatus(operationId: string): number {
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item)) {
      if (op.operationId === operationId) return Number(Object.keys(op.responses).find((s) => s.startsWith("2")));
    }
  }
  throw new Error(`no operation ${operationId}`);
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
    const { token, ...input } = run;
    const { document, variables } = meshOperation(meshSchema, operationId, input);
    recorder.take();
    const result = await mesh.execute(document, variables, { token: token === undefined ? ctx.tenant.token : (token ?? "") });
    const exchanges = recorder.take();

    expect(result.errors?.map((e) => e.message) ?? [], "the Mesh could not read the response as documented").toEqual([]);
    expect(exchanges, "the Mesh made exactly one REST call").toHaveLength(1);
    const [exchange] = exchanges;
    expect(validator.find(exchange.method, exchange.path)?.operation.operationId).toBe(operationId);
    const expected = c.status ?? successStatus(operationId);
    expect(exchange.status, exchange.body.slice(0, 500)).toBe(expected);
    expect(validator.check(exchange)).toEqual([]);

    const data = result.data?.[operationId] as { __typename?: string } | null | undefined;
    if (data && typeof data === "object" && data.__typename) {
      expect(data.__typename === "ProblemDetails", `Mesh read a ${data.__typename} for HTTP ${exchange.status}`).toBe(expected >= 400);
    }
  });
});

describe("the typed Mesh SDK", () => {
  it("has a method per operation and reads the store with the context's token", async () => {
    const sdk = sdkFor({ token: ctx.tenant.token });
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
