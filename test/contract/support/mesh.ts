import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  buildSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  isUnionType,
  Kind,
  type DocumentNode,
  type GraphQLField,
  type GraphQLInputObjectType,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLSchema,
} from "graphql";

import { LATEST_API_VERSION } from "../../../src/platform/versions.js";

export const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const MESH_DIR = join(ROOT, "mesh");
const BUILT = join(MESH_DIR, ".mesh");
const STAMP = join(BUILT, "built-from.sha256");

/** What the built mesh depends on: the document, the mesh config and its transform. */
function inputsHash(): string {
  const hash = createHash("sha256");
  for (const file of [`schema/openapi-${LATEST_API_VERSION}.json`, "mesh/.meshrc.yaml", "mesh/response-view.ts"]) hash.update(readFileSync(join(ROOT, file)));
  return hash.digest("hex");
}

/**
 * Runs `mesh build` when mesh/.mesh is missing or was built from another document (CI starts from a clean
 * clone). Returns how long it took, or null when the build was current.
 */
export function ensureMeshBuilt(): number | null {
  const hash = inputsHash();
  if (existsSync(join(BUILT, "index.ts")) && existsSync(STAMP) && readFileSync(STAMP, "utf8") === hash) return null;
  const started = performance.now();
  try {
    execFileSync(join(ROOT, "node_modules/.bin/mesh"), ["build", "--dir", "mesh"], { cwd: ROOT, stdio: "pipe" });
  } catch (e) {
    const { stdout, stderr } = e as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`mesh build failed (npm run mesh:build):\n${String(stdout ?? "").slice(-3000)}\n${String(stderr ?? "").slice(-3000)}`);
  }
  writeFileSync(STAMP, hash);
  return Math.round(performance.now() - started);
}

export interface MeshRunner {
  execute(
    document: string,
    variables: Record<string, unknown>,
    context: Record<string, unknown>,
  ): Promise<{ data?: Record<string, unknown> | null; errors?: readonly { message: string }[] }>;
  destroy(): void;
}

/** The typed SDK: one method per operation, `<operationId>_query` or `<operationId>_mutation`. */
export type MeshSdk = Record<string, (variables?: Record<string, unknown>) => Promise<Record<string, unknown>>>;

const isDocument = (value: unknown): value is DocumentNode => typeof value === "object" && value !== null && "kind" in value && value.kind === Kind.DOCUMENT;

export interface BuiltMesh {
  mesh: MeshRunner;
  schema: GraphQLSchema;
  sdk: (context: Record<string, unknown>) => MeshSdk;
  /** The operations the SDK sends, one per method, by method name (`getStore_query`). */
  sdkDocuments: Record<string, DocumentNode>;
}

/** The built mesh, executing against MESH_API_BASE_URL. */
export async function loadMesh(): Promise<BuiltMesh> {
  const built = (await import(/* @vite-ignore */ join(BUILT, "index.ts"))) as {
    getBuiltMesh(): Promise<MeshRunner>;
    getMeshSDK(context: Record<string, unknown>): MeshSdk;
  } & Record<string, unknown>;
  const mesh = await built.getBuiltMesh();
  // The SDL, read with our own graphql: only strings cross between it and the Mesh's runtime (the SDK's
  // documents are plain AST objects).
  // assumeValidSDL: the Mesh marks oneOf inputs `@oneOf(subgraph: …)`, an argument graphql's built-in @oneOf lacks.
  const schema = buildSchema(readFileSync(join(BUILT, "schema.graphql"), "utf8"), { assumeValidSDL: true });
  const sdkDocuments: Record<string, DocumentNode> = {};
  for (const [name, value] of Object.entries(built))
    if (name.endsWith("Document") && isDocument(value)) sdkDocuments[name.slice(0, -"Document".length)] = value;
  return { mesh, schema, sdk: (context) => built.getMeshSDK(context), sdkDocuments };
}

/** A selection of every field, through unions, down to `depth` levels. */
function selectAll(type: GraphQLNamedType, depth: number): string {
  if (isUnionType(type))
    return `{ __typename ${type
      .getTypes()
      .map((t) => `... on ${t.name} ${selectAll(t, depth)}`)
      .join(" ")} }`;
  if (!isObjectType(type)) return "";
  const fields = Object.values(type.getFields())
    .filter((f) => !f.args.some((a) => isNonNullType(a.type)))
    .map((f) => {
      const named = getNamedType(f.type);
      if (isLeafType(named)) return f.name;
      return depth > 0 ? `${f.name} ${selectAll(named, depth - 1)}` : "";
    });
  return `{ __typename ${fields.filter(Boolean).join(" ")} }`;
}

/** The raw value an enum value stands for (the Mesh renames values that are not GraphQL names). */
function enumRaw(value: {
  name: string;
  astNode?: { directives?: readonly { name: { value: string }; arguments?: readonly { name: { value: string }; value: unknown }[] }[] } | null;
}): unknown {
  const directive = value.astNode?.directives?.find((d) => d.name.value === "enum");
  const arg = directive?.arguments?.find((a) => a.name.value === "value")?.value as { value?: string } | undefined;
  return arg?.value !== undefined ? JSON.parse(arg.value) : value.name;
}

/** Converts a REST value into the Mesh's input for that GraphQL type (enum values by their raw value). */
/** Whether an input object has every key of the value, with its enum fields listing the value's. */
function takes(type: GraphQLInputObjectType, value: object): boolean {
  const fields = type.getFields();
  return Object.entries(value).every(([k, v]) => {
    const field = fields[k];
    if (!field) return false;
    const named = getNamedType(field.type);
    return !isEnumType(named) || named.getValues().some((e) => enumRaw(e) === v);
  });
}

function toMeshValue(value: unknown, type: GraphQLInputType): unknown {
  if (value === null || value === undefined) return value;
  if (isNonNullType(type)) return toMeshValue(value, type.ofType);
  if (isListType(type)) return Array.isArray(value) ? value.map((v) => toMeshValue(v, type.ofType)) : toMeshValue(value, type.ofType);
  if (isEnumType(type)) return type.getValues().find((v) => enumRaw(v) === value)?.name ?? value;
  if (isInputObjectType(type) && type.isOneOf && typeof value === "object" && !Array.isArray(value)) {
    // A oneOf body (StatusChange) is one field per branch: the branch whose enums take the body's values.
    for (const [name, field] of Object.entries(type.getFields())) {
      const branch = getNamedType(field.type);
      if (isInputObjectType(branch) && takes(branch, value)) return { [name]: toMeshValue(value, branch) };
    }
  }
  if (isInputObjectType(type) && typeof value === "object" && !Array.isArray(value)) {
    const fields = type.getFields();
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fields[k] ? toMeshValue(v, fields[k].type) : v]));
  }
  return value;
}

export interface OperationInput {
  path?: Record<string, string>;
  query?: Record<string, unknown>;
  headers?: Record<string, string>;
  body?: unknown;
}

const argName = (name: string) => name.replace(/[^A-Za-z0-9_]/g, "_");

/** The GraphQL operation that calls one REST operation through the Mesh, with its variables. */
export function meshOperation(schema: GraphQLSchema, operationId: string, input: OperationInput): { document: string; variables: Record<string, unknown> } {
  const query = schema.getQueryType()?.getFields()[operationId];
  const mutation = schema.getMutationType()?.getFields()[operationId];
  const field: GraphQLField<unknown, unknown> | undefined = query ?? mutation;
  if (!field) throw new Error(`operation ${operationId} is not in the built mesh: schema/openapi.json is stale, run \`npm run print-schema\``);

  const given = new Map<string, unknown>();
  for (const group of [input.path, input.query, input.headers]) for (const [k, v] of Object.entries(group ?? {})) given.set(argName(k), v);
  if (input.body !== undefined) given.set("input", input.body);
  const args = field.args.filter((a) => given.has(a.name));
  const unknown = [...given.keys()].filter((k) => !field.args.some((a) => a.name === k));
  if (unknown.length)
    throw new Error(`${operationId}: the mesh field has no argument for ${unknown.join(", ")} (arguments: ${field.args.map((a) => a.name).join(", ")})`);

  const variables = Object.fromEntries(args.map((a) => [a.name, toMeshValue(given.get(a.name), a.type)]));
  const declared = args.map((a) => `$${a.name}: ${String(a.type)}`).join(", ");
  const passed = args.map((a) => `${a.name}: $${a.name}`).join(", ");
  const kind = query ? "query" : "mutation";
  const document = `${kind} contract${declared ? `(${declared})` : ""} { ${operationId}${passed ? `(${passed})` : ""} ${selectAll(getNamedType(field.type), 8)} }`;
  return { document, variables };
}
