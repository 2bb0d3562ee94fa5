import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { Ajv, type ValidateFunction } from "ajv";
import * as addFormatsModule from "ajv-formats";
import type { Middleware } from "openapi-fetch";
import openapiTS, { astToString } from "openapi-typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createTenant } from "../helpers/tenants.js";
import { createCatalog } from "../helpers/fixtures.js";
import { startReceiver, type Receiver } from "../webhooks/receiver.js";
import { ROOT } from "./support/mesh.js";
import { LATEST_API_VERSION } from "../../src/platform/versions.js";

/** What the test passes to and reads from client/flow.ts (whose own types come from the generated client). */
interface FlowInput {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  productId: string;
  receiverUrl: string;
  observe: Middleware;
}
interface FlowResult {
  orderIds: string[];
  pagedOrderIds: string[];
  cancellation: { status: string };
  endpoints: unknown[];
  events: { eventType: string }[];
}

/**
 * The client a partner generates: openapi-typescript over the latest version's document, compiled with the partner flow
 * (./client/flow.ts) under `tsc --strict`, then run with openapi-fetch against the real service. Every response
 * is checked by ajv with its default options (plus ajv-formats; `x-` keywords ignored) against the schema the
 * document gives its status, its documented headers too.
 */

const addFormats = addFormatsModule.default as unknown as (ajv: Ajv) => Ajv;
const CLIENT_DIR = join(ROOT, "test/contract/client");
const DOC_TEXT = readFileSync(join(ROOT, `schema/openapi-${LATEST_API_VERSION}.json`), "utf8");

interface Seen {
  method: string;
  schemaPath: string;
  status: number;
  headers: Headers;
  contentType: string;
  body: unknown;
}

type Json = Record<string, unknown>;
const isJson = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const pointerSegment = (segment: string) => segment.replace(/~/g, "~0").replace(/\//g, "~1");

/** The document through default ajv: one validator per JSON pointer into it. */
class DocumentCheck {
  private readonly doc: Json = JSON.parse(DOC_TEXT);
  private readonly bodies = addFormats(new Ajv({ strict: false }));
  // Header values are text: "60" is checked as the integer it spells.
  private readonly headers = addFormats(new Ajv({ strict: false, coerceTypes: true }));
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor() {
    this.bodies.addSchema(this.doc, "openapi.json");
  }

  /** The object at a `#/a/b` reference, or the value itself when it is not a reference. */
  private resolve(value: unknown): Json {
    if (!isJson(value)) throw new Error(`not an object: ${JSON.stringify(value)}`);
    if (typeof value.$ref !== "string") return value;
    let at: unknown = this.doc;
    for (const part of value.$ref.slice(2).split("/")) at = isJson(at) ? at[part.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined;
    return this.resolve(at);
  }

  /** Every way the response departs from the document. */
  check(seen: Seen): string[] {
    const where = `${seen.method} ${seen.schemaPath} → ${seen.status}`;
    const operation = this.resolve(this.resolve(this.resolve(this.doc.paths)[seen.schemaPath])[seen.method.toLowerCase()]);
    const responses = this.resolve(operation.responses);
    if (!(String(seen.status) in responses)) return [`${where}: status not documented`];
    const response = this.resolve(responses[String(seen.status)]);
    const problems: string[] = [];

    const content = isJson(response.content) ? response.content : {};
    if (!(seen.contentType in content)) problems.push(`${where}: content-type ${seen.contentType}, documented ${Object.keys(content).join(", ")}`);
    else {
      const pointer =
        isJson(responses[String(seen.status)]) && typeof (responses[String(seen.status)] as Json).$ref === "string"
          ? `${((responses[String(seen.status)] as Json).$ref as string).slice(1)}/content/${pointerSegment(seen.contentType)}/schema`
          : `/paths/${pointerSegment(seen.schemaPath)}/${seen.method.toLowerCase()}/responses/${seen.status}/content/${pointerSegment(seen.contentType)}/schema`;
      let validate = this.compiled.get(pointer);
      if (!validate) {
        validate = this.bodies.compile({ $ref: `openapi.json#${pointer}` });
        this.compiled.set(pointer, validate);
      }
      if (!validate(seen.body)) problems.push(`${where}: ${this.bodies.errorsText(validate.errors)}`);
    }

    for (const [name, declared] of Object.entries(isJson(response.headers) ? response.headers : {})) {
      const header = this.resolve(declared);
      const value = seen.headers.get(name);
      if (value === null) {
        if (header.required === true) problems.push(`${where}: header ${name} missing`);
        continue;
      }
      const holder = { value };
      const validate = this.headers.compile({ type: "object", properties: { value: this.resolve(header.schema) } });
      if (!validate(holder)) problems.push(`${where}: header ${name}: ${value} ${this.headers.errorsText(validate.errors)}`);
    }
    return problems;
  }
}

let app: TestApp;
let receiver: Receiver;

beforeAll(async () => {
  const ast = await openapiTS(DOC_TEXT);
  mkdirSync(join(CLIENT_DIR, "generated"), { recursive: true });
  writeFileSync(join(CLIENT_DIR, "generated/openapi.ts"), astToString(ast));
  app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" });
  receiver = await startReceiver();
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await app?.close();
});

describe("a client generated from the latest version's document", () => {
  it("compiles with the partner flow under tsc --strict", async () => {
    const run = promisify(execFile)("npx", ["--no-install", "tsc", "-p", CLIENT_DIR], { cwd: ROOT });
    await expect(run.catch((e: { stdout: string }) => Promise.reject(new Error(e.stdout)))).resolves.toBeTruthy();
  }, 120_000);

  it("runs the partner flow against the real service, every response as documented", async () => {
    const tenant = await createTenant(app, { apiVersion: LATEST_API_VERSION });
    const { products } = await createCatalog(app.services.db, tenant.storeId);
    const seen: Seen[] = [];
    const observe: Middleware = {
      async onResponse({ request, response, schemaPath }) {
        const text = await response.clone().text();
        const contentType = (response.headers.get("content-type") ?? "").split(";")[0].trim();
        seen.push({
          method: request.method,
          schemaPath,
          status: response.status,
          headers: response.headers,
          contentType,
          body: text ? JSON.parse(text) : undefined,
        });
      },
    };
    // Loaded by path, so the repository's typecheck does not follow it into the types generated here.
    const flow: { partnerFlow?: unknown } = await import(pathToFileURL(join(CLIENT_DIR, "flow.ts")).href);
    if (typeof flow.partnerFlow !== "function") throw new Error("flow.ts exports no partnerFlow");
    const partnerFlow = flow.partnerFlow as (input: FlowInput) => Promise<FlowResult>;
    const result = await partnerFlow({
      baseUrl: app.baseUrl,
      clientId: tenant.clientId,
      clientSecret: tenant.clientSecret,
      productId: products.find((p) => p.isActive)?.id ?? products[0].id,
      receiverUrl: receiver.url("/client-flow"),
      observe,
    });

    expect(result.pagedOrderIds.toSorted()).toEqual(result.orderIds.toSorted());
    expect(result.cancellation.status).toBe("CANCELLED");
    expect(result.endpoints).toHaveLength(1);
    expect(result.events.map((e) => e.eventType)).toEqual(expect.arrayContaining(["customer.created", "order.created", "order.cancelled"]));

    const operations = seen.map((s) => `${s.method} ${s.schemaPath}`);
    expect(new Set(operations).size).toBe(10);
    const check = new DocumentCheck();
    expect(seen.flatMap((s) => check.check(s))).toEqual([]);
  }, 120_000);
});
