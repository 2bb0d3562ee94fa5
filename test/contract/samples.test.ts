import { execFile, spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/platform/config.js";
import { schema } from "../../src/graphql/schema.js";
import { WEBHOOK_URL } from "../../src/platform/examples.js";
import type { CodeSample } from "../../src/rest/openapi-samples.js";
import type { OpenApiDocument } from "../../src/rest/openapi-document.js";
import { buildOpenApi } from "../../src/rest/openapi.js";
import { routes } from "../../src/rest/routes.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, type Tenant } from "../helpers/tenants.js";
import { startReceiver, type Receiver } from "../webhooks/receiver.js";
import { Recorder } from "./support/recorder.js";
import { ContractValidator } from "./support/validator.js";

/**
 * The x-codeSamples of the OpenAPI document: the main flows have one in each language, each names its
 * operation's method and path, and each runs (curl in sh, JavaScript in node, Python with requests) against a
 * real server through a recording proxy, whose exchanges must be the operation's documented success.
 */

const doc: OpenApiDocument = buildOpenApi(routes, schema, loadConfig({}).publicBaseUrl);
const validator = new ContractValidator(doc);

const MAIN_FLOWS = ["createToken", "listOrders", "getOrderById", "updateOrderStatus", "createWebhookEndpoint", "createSandboxOrder", "listEvents"];

interface Sampled {
  operationId: string;
  method: string;
  template: string;
  sample: CodeSample;
}

const isSamples = (v: unknown): v is CodeSample[] => Array.isArray(v);

const sampled: Sampled[] = Object.entries(doc.paths).flatMap(([template, item]) =>
  Object.entries(item).flatMap(([method, op]) => {
    const samples = op["x-codeSamples"];
    return isSamples(samples) ? samples.map((sample) => ({ operationId: op.operationId, method: method.toUpperCase(), template, sample })) : [];
  }),
);

const runs = sampled.map((s) => [`${s.operationId} in ${s.sample.lang}`, s] as const);

describe("the samples", () => {
  it.each(MAIN_FLOWS)("%s has one in curl, JavaScript and Python", (operationId) => {
    expect(sampled.filter((s) => s.operationId === operationId).map((s) => s.sample.lang)).toEqual(["curl", "JavaScript", "Python"]);
  });

  it.each(runs)("%s names its operation's path and method", (_name, { method, template, sample }) => {
    // A path parameter is some variable of the language: $ORDER_ID, ${process.env.ORDER_ID}, {os.environ['ORDER_ID']}.
    const path = new RegExp(template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{\w+\\?\}/g, "(\\$\\w+|\\$\\{[^}]+\\}|\\{[^}]+\\})"));
    expect(sample.source).toMatch(path);
    const said = {
      curl: /-X (\w+)/.exec(sample.source)?.[1] ?? "GET",
      JavaScript: /method: "(\w+)"/.exec(sample.source)?.[1] ?? "GET",
      Python: /requests\.(\w+)\(/.exec(sample.source)?.[1].toUpperCase(),
    }[sample.lang];
    expect(said).toBe(method);
  });
});

const hasRequests = spawnSync("python3", ["-c", "import requests"]).status === 0;
if (!hasRequests) console.warn("python3 with requests is not installed here: the Python samples are checked but not run");

describe("each sample against a real server", () => {
  let app: TestApp;
  let receiver: Receiver;
  let recorder: Recorder;
  let tenant: Tenant;
  let dir: string;

  beforeAll(async () => {
    // The webhook sample's receiver is on 127.0.0.1, which production settings refuse.
    app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" });
    receiver = await startReceiver();
    recorder = new Recorder(app.baseUrl);
    await recorder.start();
    tenant = await createTenant(app);
    expect((await call(app, "POST", "/public/v1/sandbox/seed", { token: tenant.token })).status).toBe(201);
    dir = await mkdtemp(join(tmpdir(), "samples-"));
  }, 60_000);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    await recorder?.stop();
    await receiver?.close();
    await app?.close();
  });

  async function run(sample: CodeSample, env: Record<string, string>): Promise<void> {
    const source = sample.source.replaceAll(WEBHOOK_URL, receiver.url("/samples"));
    const options = { env: { PATH: process.env.PATH ?? "", ...env }, timeout: 30_000 };
    if (sample.lang === "curl") await promisify(execFile)("sh", ["-ec", source], options);
    else if (sample.lang === "Python") await promisify(execFile)("python3", ["-c", source], options);
    else {
      const file = join(dir, `${Math.random().toString(36).slice(2)}.mjs`);
      await writeFile(file, source);
      await promisify(execFile)(process.execPath, [file], options);
    }
  }

  it.each(runs)("%s", async (_name, { operationId, template, method, sample }) => {
    if (sample.lang === "Python" && !hasRequests) return;
    // A fresh PENDING order, so each status change is a move the lifecycle allows.
    const order = await call<{ id: string }>(app, "POST", "/public/v1/sandbox/orders", { token: tenant.token, body: { scenario: "delivery" } });
    expect(order.status).toBe(201);
    recorder.take();
    await run(sample, {
      BASE: recorder.baseUrl,
      TOKEN: tenant.token,
      CLIENT_ID: tenant.clientId,
      CLIENT_SECRET: tenant.clientSecret,
      ORDER_ID: order.body.id,
      AFTER: "0",
    });
    const exchanges = recorder.take();
    expect(exchanges.length, "the sample made a request").toBeGreaterThan(0);
    const success = Object.keys(doc.paths[template][method.toLowerCase()].responses).find((s) => s.startsWith("2"));
    for (const exchange of exchanges) {
      expect(validator.find(exchange.method, exchange.path)?.operation.operationId, `${exchange.method} ${exchange.path}`).toBe(operationId);
      expect(String(exchange.status), exchange.body.slice(0, 500)).toBe(success);
      expect(validator.check(exchange)).toEqual([]);
    }
  });
});
