import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import * as addFormatsModule from "ajv-formats";
import type { JsonSchema } from "../../../src/platform/json.js";
import type { OpenApiDocument, OpenApiOperation } from "../../../src/rest/openapi-document.js";

// ajv-formats is CommonJS: under ESM its function arrives as the module's `default`.
const addFormats = addFormatsModule.default as unknown as (ajv: Ajv2020) => Ajv2020;

/** One HTTP exchange as the client saw it. */
export interface Exchange {
  method: string;
  path: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

const pointer = (parts: string[]) => `#/${parts.map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1")).join("/")}`;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Whether a documented media type's body is bytes (`format: binary`), a file rather than JSON. */
export function isBinary(media: unknown): boolean {
  return isObject(media) && isObject(media.schema) && media.schema.format === "binary";
}

/**
 * Closes every documented object so a field the server sends but the document does not list fails
 * validation: `unevaluatedProperties: false` wherever a schema lists `properties` and says nothing about
 * extra ones. Members of an `allOf` (and components used as one) stay open, their parent closes instead.
 */
function closeObjects(doc: OpenApiDocument): OpenApiDocument {
  const copy = structuredClone(doc) as unknown as Record<string, unknown>;
  const allOfRefs = new Set<string>();
  const collect = (v: unknown): void => {
    if (Array.isArray(v)) {
      for (const x of v) collect(x);
      return;
    }
    if (!isObject(v)) return;
    if (Array.isArray(v.allOf)) for (const m of v.allOf) if (isObject(m) && typeof m.$ref === "string") allOfRefs.add(m.$ref);
    Object.values(v).forEach(collect);
  };
  collect(copy);
  const walk = (v: unknown, open: boolean): void => {
    if (Array.isArray(v)) {
      for (const x of v) walk(x, false);
      return;
    }
    if (!isObject(v)) return;
    const describesObject = isObject(v.properties) || Array.isArray(v.allOf);
    if (describesObject && !open && !("additionalProperties" in v) && !("unevaluatedProperties" in v)) v.unevaluatedProperties = false;
    for (const [k, child] of Object.entries(v)) {
      if (k === "allOf" && Array.isArray(child)) for (const m of child) walk(m, true);
      else walk(child, false);
    }
  };
  const schemas = (copy.components as Record<string, Record<string, unknown>>).schemas;
  for (const [name, schema] of Object.entries(schemas)) walk(schema, allOfRefs.has(`#/components/schemas/${name}`));
  walk(copy.paths, false);
  return copy as unknown as OpenApiDocument;
}

/** Checks HTTP exchanges against the OpenAPI document with ajv: status, media type, body and headers. */
export class ContractValidator {
  private readonly bodies = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  private readonly headers = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, coerceTypes: true });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(readonly doc: OpenApiDocument) {
    for (const ajv of [this.bodies, this.headers]) {
      addFormats(ajv);
      ajv.addSchema(closeObjects(doc) as unknown as JsonSchema, "openapi.json");
    }
  }

  /** The operation that answers `method path` (a concrete path like /public/v1/orders/1234). */
  find(method: string, path: string): { template: string; operation: OpenApiOperation } | null {
    for (const [template, item] of Object.entries(this.doc.paths)) {
      const pattern = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{\w+\}/g, "[^/]+")}$`);
      const operation = item[method.toLowerCase()];
      if (operation && pattern.test(path)) return { template, operation };
    }
    return null;
  }

  private resolveResponse(template: string, method: string, status: string): { at: string[]; response: Record<string, unknown> } | null {
    const operation = this.doc.paths[template][method];
    const response = operation.responses[status];
    if (!response) return null;
    if (typeof response.$ref === "string") {
      const name = response.$ref.split("/").pop() as string;
      return { at: ["components", "responses", name], response: this.doc.components.responses[name] };
    }
    return { at: ["paths", template, method, "responses", status], response };
  }

  private validator(ajv: Ajv2020, key: string, schema: JsonSchema): ValidateFunction {
    let fn = this.compiled.get(key);
    if (!fn) {
      fn = ajv.compile(schema);
      this.compiled.set(key, fn);
    }
    return fn;
  }

  /** Every way a value departs from the schema at a place in the document (e.g. an example); empty when it conforms. */
  checkValue(at: string[], value: unknown): string[] {
    const ref = `openapi.json${pointer(at)}`;
    const validate = this.validator(this.bodies, ref, { $ref: ref });
    if (validate(value)) return [];
    return (validate.errors ?? []).map((e) => {
      const extra = e.keyword === "unevaluatedProperties" ? ` (${(e.params as { unevaluatedProperty: string }).unevaluatedProperty} is not documented)` : "";
      return `${e.instancePath || "/"} ${e.message}${extra}`;
    });
  }

  /** Whether the document gives the exchange's answer (its status, its content type) as a file's bytes. */
  answersBytes(exchange: Exchange): boolean {
    const found = this.find(exchange.method, exchange.path);
    const resolved = found && this.resolveResponse(found.template, exchange.method.toLowerCase(), String(exchange.status));
    const content = isObject(resolved?.response.content) ? resolved.response.content : {};
    return isBinary(content[(exchange.headers["content-type"] ?? "").split(";")[0].trim()]);
  }

  /** Every way the exchange departs from the document; empty when it conforms. */
  check(exchange: Exchange): string[] {
    const found = this.find(exchange.method, exchange.path);
    if (!found) return [`${exchange.method} ${exchange.path} is not in the document`];
    const method = exchange.method.toLowerCase();
    const where = `${exchange.method} ${found.template} → ${exchange.status}`;
    const resolved = this.resolveResponse(found.template, method, String(exchange.status));
    if (!resolved) return [`${where}: status ${exchange.status} is not documented (documented: ${Object.keys(found.operation.responses).join(", ")})`];
    const problems: string[] = [];
    const { at, response } = resolved;

    const content = (response.content ?? {}) as Record<string, unknown>;
    const mediaTypes = Object.keys(content);
    const contentType = (exchange.headers["content-type"] ?? "").split(";")[0].trim();
    if (mediaTypes.length === 0) {
      if (exchange.body !== "") problems.push(`${where}: documented without a body, got ${exchange.body.slice(0, 200)}`);
    } else if (!mediaTypes.includes(contentType)) {
      problems.push(`${where}: content-type ${contentType || "(none)"}, documented ${mediaTypes.join(", ")}`);
    } else if (!isBinary(content[contentType])) {
      // A file's bytes (an export's gzip) are no JSON to check: its media type above and its headers below are its contract.
      let body: unknown;
      try {
        body = JSON.parse(exchange.body);
      } catch {
        problems.push(`${where}: body is not JSON: ${exchange.body.slice(0, 200)}`);
      }
      if (body !== undefined) {
        const ref = `openapi.json${pointer([...at, "content", contentType, "schema"])}`;
        const validate = this.validator(this.bodies, ref, { $ref: ref });
        if (!validate(body)) {
          for (const e of validate.errors ?? []) {
            const extra =
              e.keyword === "unevaluatedProperties" ? ` (${(e.params as { unevaluatedProperty: string }).unevaluatedProperty} is not documented)` : "";
            problems.push(`${where}: body${e.instancePath} ${e.message}${extra}`);
          }
        }
      }
    }

    const headers = (response.headers ?? {}) as Record<string, Record<string, unknown>>;
    for (const [name, declared] of Object.entries(headers)) {
      const isRef = typeof declared.$ref === "string";
      const headerName = isRef ? ((declared.$ref as string).split("/").pop() as string) : name;
      const header = isRef ? this.doc.components.headers[headerName] : declared;
      const value = exchange.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header.required) problems.push(`${where}: required header ${name} is missing`);
        continue;
      }
      const schemaAt = isRef ? ["components", "headers", headerName, "schema"] : [...at, "headers", name, "schema"];
      const ref = `openapi.json${pointer(schemaAt)}`;
      const validate = this.validator(this.headers, `header:${ref}`, { type: "object", properties: { value: { $ref: ref } } });
      if (!validate({ value })) problems.push(`${where}: header ${name}: ${JSON.stringify(value)} ${validate.errors?.[0]?.message ?? "is invalid"}`);
    }
    return problems;
  }
}
