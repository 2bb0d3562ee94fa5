import { randomUUID } from "node:crypto";
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLObjectType,
} from "graphql";
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { migrate, MIGRATIONS_DIR } from "../../src/platform/db/migrate.js";
import { schema } from "../../src/graphql/schema.js";
import { createAdminKey } from "../../src/modules/admin/operations.js";
import type { AdminRole } from "../../src/platform/db/prisma.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { ADMIN_KEY, graphql } from "../helpers/tenants.js";

/**
 * Every root field, called with each admin role. Which fields are administrators' is not listed here: a field the
 * ADMIN role may use is one, so a new one is checked as soon as it exists. The rule: every role reads; SUPPORT
 * also runs the mutations below; every other mutation is ADMIN's alone.
 */
const SUPPORT_MUTATIONS = new Set([
  "replayWebhookDelivery",
  "replayWebhookDeliveries",
  "recoverWebhookDeliveries",
  "backfillWebhookEndpoint",
  "setWebhookEndpointStatus",
]);

function minimumRole(operation: "query" | "mutation", field: string): AdminRole {
  if (operation === "query") return "VIEWER";
  return SUPPORT_MUTATIONS.has(field) ? "SUPPORT" : "ADMIN";
}

const RANK: Record<AdminRole, number> = { VIEWER: 0, SUPPORT: 1, ADMIN: 2 };

/** A value of the type that passes GraphQL validation (the resolver may still refuse it: that is not FORBIDDEN). */
function sample(type: GraphQLInputType): unknown {
  if (isNonNullType(type)) return sample(type.ofType);
  if (isListType(type)) return [sample(type.ofType)];
  if (isEnumType(type)) return type.getValues()[0].name;
  if (isInputObjectType(type)) {
    return Object.fromEntries(
      Object.values(type.getFields())
        .filter((f) => isNonNullType(f.type))
        .map((f) => [f.name, sample(f.type)]),
    );
  }
  if (isScalarType(type)) {
    const byName: Record<string, unknown> = {
      ID: randomUUID(),
      String: "role-test",
      Int: 1,
      SafeInt: 0,
      Float: 1,
      Boolean: true,
      DateTime: new Date().toISOString(),
      JSON: {},
    };
    if (type.name in byName) return byName[type.name];
  }
  throw new Error(`no sample for ${String(type)}`);
}

/** `mutation($input: T!) { field(input: $input) { __typename } }` with sample values for the required arguments. */
function operationFor(operation: "query" | "mutation", field: GraphQLField<unknown, unknown>) {
  const args = field.args.filter((a: GraphQLArgument) => isNonNullType(a.type));
  const decl = args.map((a) => `$${a.name}: ${String(a.type)}`).join(", ");
  const pass = args.map((a) => `${a.name}: $${a.name}`).join(", ");
  const named = getNamedType(field.type);
  const selection = isScalarType(named) || isEnumType(named) ? "" : " { __typename }";
  return {
    query: `${operation}${decl ? `(${decl})` : ""} { ${field.name}${pass ? `(${pass})` : ""}${selection} }`,
    variables: Object.fromEntries(args.map((a) => [a.name, sample(a.type)])),
  };
}

const rootFields = (["query", "mutation"] as const).flatMap((operation) => {
  const type = (operation === "query" ? schema.getQueryType() : schema.getMutationType()) as GraphQLObjectType;
  return Object.values(type.getFields()).map((field) => ({ operation, field }));
});

let app: TestApp;
const keys = {} as Record<AdminRole, string>;

beforeAll(async () => {
  app = await startTestApp();
  for (const role of ["VIEWER", "SUPPORT", "ADMIN"] as const) keys[role] = (await createAdminKey(app.services.db, { name: `role ${role}`, role })).key;
});
afterAll(() => app.close());

type Answer = Awaited<ReturnType<typeof graphql>>;
const refused = (a: Answer) => a.errors?.some((e) => e.extensions?.code === "FORBIDDEN") ?? false;
/** The resolver ran: no error, or one of its own (a sample id is NOT_FOUND), never a malformed request. */
const ran = (a: Answer) => (a.errors ?? []).every((e) => typeof e.extensions?.code === "string" && !/GRAPHQL|BAD_USER_INPUT/.test(e.extensions.code));

describe("admin key roles", () => {
  it("every admin field is allowed or FORBIDDEN for each role as the role says", async () => {
    const adminFields: string[] = [];
    for (const { operation, field } of rootFields) {
      const { query, variables } = operationFor(operation, field);
      const asAdmin = await graphql(app, query, variables, keys.ADMIN);
      // ADMIN_API_KEY is an ADMIN key: it is answered the same way.
      expect(refused(await graphql(app, query, variables, ADMIN_KEY)), `${field.name} with ADMIN_API_KEY`).toBe(refused(asAdmin));
      if (refused(asAdmin)) {
        // A partner's field: no admin role reaches it.
        for (const role of ["VIEWER", "SUPPORT"] as const)
          expect(refused(await graphql(app, query, variables, keys[role])), `${field.name} as ${role}`).toBe(true);
        continue;
      }
      expect(ran(asAdmin), `${field.name} as ADMIN: ${JSON.stringify(asAdmin.errors)}`).toBe(true);
      adminFields.push(field.name);
      const needs = minimumRole(operation, field.name);
      for (const role of ["VIEWER", "SUPPORT"] as const) {
        const answer = await graphql(app, query, variables, keys[role]);
        const allowed = RANK[role] >= RANK[needs];
        expect(allowed ? ran(answer) : refused(answer), `${operation} ${field.name} as ${role}: ${JSON.stringify(answer.errors)}`).toBe(true);
        if (!allowed) {
          const message = answer.errors?.[0].message ?? "";
          expect(message).toContain(`role ${role}`);
          expect(message).toContain(needs);
          expect(message).not.toMatch(/Ask the store/);
        }
      }
    }
    // The field set really was found by calling: the administrators' reads and writes are among it.
    expect(adminFields).toEqual(expect.arrayContaining(["stores", "webhookDeliveries", "createAdminKey", "replayWebhookDelivery", "setWebhookEndpointStatus"]));
    expect(adminFields).not.toContain("orders");
  }, 120_000);

  it("a viewer reads nested administrator types too", async () => {
    const res = await graphql<{ applications: { data: unknown[] }; adminKeys: { role: string }[] }>(
      app,
      `{ applications { data { id grants { id store { id } } } } adminKeys { role } }`,
      {},
      keys.VIEWER,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.adminKeys.map((k) => k.role)).toEqual(expect.arrayContaining(["VIEWER", "SUPPORT", "ADMIN"]));
  });

  it("the migration makes keys from before roles ADMIN, and new keys name their role", async () => {
    const name = `partner_roles_${Date.now()}`;
    const server = new pg.Client({ connectionString: inject("serverUrl") });
    await server.connect();
    await server.query(`create database ${name}`);
    const url = new URL(inject("serverUrl"));
    url.pathname = `/${name}`;
    const dir = await mkdtemp(join(tmpdir(), "migrations-"));
    const c = new pg.Client({ connectionString: url.toString() });
    try {
      const all = (await readdir(MIGRATIONS_DIR)).filter((d) => /^\d/.test(d)).sort();
      const before = all.slice(
        0,
        all.findIndex((d) => d.endsWith("_admin_key_roles")),
      );
      for (const d of before) await cp(join(MIGRATIONS_DIR, d), join(dir, d), { recursive: true });
      await migrate(url.toString(), undefined, dir);
      await c.connect();
      await c.query(`insert into "AdminKey" (id, name, "keyHash", prefix) values (gen_random_uuid(), 'old', 'h', 'adm_old')`);
      await migrate(url.toString());
      expect((await c.query(`select role::text from "AdminKey"`)).rows).toEqual([{ role: "ADMIN" }]);
      await expect(c.query(`insert into "AdminKey" (id, name, "keyHash", prefix) values (gen_random_uuid(), 'new', 'h2', 'adm_new')`)).rejects.toThrow(/role/);
    } finally {
      await c.end();
      await server.query(`drop database if exists ${name} with (force)`);
      await server.end();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
