import SchemaBuilder, {
  BasePlugin,
  type FieldNullability,
  type InputFieldMap,
  type InputShapeFromFields,
  type PothosOutputFieldConfig,
  type SchemaTypes,
  type TypeParam,
} from "@pothos/core";
import PrismaPlugin from "@pothos/plugin-prisma";
import ScopeAuthPlugin, { type AuthFailure, type AuthScopeFailure } from "@pothos/plugin-scope-auth";
import { GraphQLError, type GraphQLFieldResolver } from "graphql";
import type PrismaTypes from "../../generated/pothos-types.js";
import { getDatamodel } from "../../generated/pothos-types.js";
import type { Scope } from "../auth/scopes.js";
import { isAdminRole, roleAllows } from "../auth/admin-keys.js";
import type { AdminRole } from "../db/prisma.js";
import { ApiError, insufficientScope, sandboxOnly } from "../errors.js";
import { INSTANT_RULE, parseInstant } from "../input.js";
import { inputChecked, type Context } from "./context.js";
import { ArgsCheck, type ArgsInput } from "../validate.js";

/** The scope checks that failed, out of any nesting of "any of" and "all of". */
function scopeFailures(failure: AuthFailure): AuthScopeFailure[] {
  if ("failures" in failure) return failure.failures.flatMap(scopeFailures);
  return failure.kind === "AuthScope" ? [failure] : [];
}

/**
 * Pothos loads relations a query did not select through model delegates of its client, which must be the
 * request's transaction when there is one (its rows are not visible elsewhere yet), else the client the request reads
 * on (a read replica's, for a read routed to one). Pothos types its client
 * as having `$connect`, which a transaction client has not; it never calls it.
 */
function pothosClient(ctx: Context): { $connect: () => Promise<void> } {
  const tx = ctx.transaction;
  if (!tx) return ctx.reader;
  return new Proxy({ $connect: () => Promise.resolve() }, { get: (target, key) => (key === "$connect" ? target.$connect : Reflect.get(tx, key)) });
}

type Resolver<Types extends SchemaTypes> = GraphQLFieldResolver<unknown, Types["Context"], object>;

/**
 * A field's `input` option is the one declaration of its operation's input (src/platform/validate.ts): this plugin
 * checks the field's arguments with it before the resolver runs (a subscription's, before it subscribes), once per
 * request, unless the REST router already checked the request it runs for. Listed after the auth plugin, so a
 * caller who may not use the field learns that first.
 */
class FieldInputPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override wrapResolve(resolver: Resolver<Types>, fieldConfig: PothosOutputFieldConfig<Types>): Resolver<Types> {
    return fieldConfig.kind === "Subscription" ? resolver : checking(resolver, fieldConfig);
  }

  override wrapSubscribe(subscribe: Resolver<Types> | undefined, fieldConfig: PothosOutputFieldConfig<Types>): Resolver<Types> | undefined {
    return subscribe && checking(subscribe, fieldConfig);
  }
}

function checking<Types extends SchemaTypes>(resolver: Resolver<Types>, fieldConfig: PothosOutputFieldConfig<Types>): Resolver<Types> {
  const { input } = fieldConfig.pothosOptions;
  if (!input) return resolver;
  const argsCheck = new ArgsCheck(input);
  return (parent, args, context, info) => {
    // A root field of a REST request's document: the router checked its input already, bound to HTTP names.
    if (info.path.prev !== undefined || !inputChecked(context)) argsCheck.check(Object.fromEntries(Object.entries(args)));
    return resolver(parent, args, context, info);
  };
}

SchemaBuilder.registerPlugin("fieldInput", FieldInputPlugin);

declare global {
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      fieldInput: FieldInputPlugin<Types>;
    }

    export interface FieldOptions<
      Types extends SchemaTypes,
      ParentShape,
      Type extends TypeParam<Types>,
      Nullable extends FieldNullability<Type>,
      Args extends InputFieldMap,
      ResolveShape,
      ResolveReturnShape,
    > {
      /** The operation's input: the schema of each argument, by argument name (src/platform/validate.ts). */
      input?: ArgsInput<InputShapeFromFields<Args>>;
    }
  }
}

export const builder = new SchemaBuilder<{
  Context: Context;
  PrismaTypes: PrismaTypes;
  /** adminRole: an admin key whose role ranks at least the one named (VIEWER < SUPPORT < ADMIN). */
  AuthScopes: { adminRole: AdminRole; partner: boolean; scope: Scope; anyScope: Scope[]; sandbox: boolean };
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    JSON: { Input: unknown; Output: unknown };
    SafeInt: { Input: number; Output: number };
  };
  DefaultFieldNullability: false;
}>({
  defaultFieldNullability: false,
  plugins: [ScopeAuthPlugin, "fieldInput", PrismaPlugin],
  prisma: { client: pothosClient, dmmf: getDatamodel(), exposeDescriptions: false, filterConnectionTotalCount: true },
  scopeAuth: {
    authScopes: (ctx) => ({
      adminRole: (needs) => ctx.principal.kind === "admin" && roleAllows(ctx.principal.role, needs),
      partner: ctx.principal.kind === "partner",
      sandbox: ctx.principal.kind === "partner" && ctx.principal.environment === "SANDBOX",
      scope: (scope) => ctx.principal.kind === "partner" && ctx.principal.scopes.has(scope),
      anyScope: (scopes) => ctx.principal.kind === "partner" && scopes.some((s) => ctx.principal.kind === "partner" && ctx.principal.scopes.has(s)),
    }),
    // Maps a failed scope check to the problem codes REST uses: 401 UNAUTHORIZED, 403 INSUFFICIENT_SCOPE or FORBIDDEN.
    unauthorizedError: (_parent, ctx, _info, result) => {
      const { principal } = ctx;
      if (principal.kind === "anonymous") return new ApiError("UNAUTHORIZED", "Send Authorization: Bearer <token>.");
      const failures = scopeFailures(result.failure);
      if (principal.kind === "admin") {
        const needs = failures.find((f) => f.scope === "adminRole")?.parameter;
        if (typeof needs === "string" && isAdminRole(needs)) {
          return new ApiError(
            "FORBIDDEN",
            `This admin key has the role ${principal.role}; this field needs ${needs} or above. Use a key with that role (an ADMIN creates one with createAdminKey or \`npm run admin -- create-admin-key\`).`,
          );
        }
        return new ApiError("FORBIDDEN", "This field is answered for a partner token (it reads the token's own store), not an admin key.");
      }
      const scope = failures.find((f) => f.scope === "scope" || f.scope === "anyScope");
      if (scope) return insufficientScope(Array.isArray(scope.parameter) ? scope.parameter.map(String) : String(scope.parameter));
      if (failures.some((f) => f.scope === "sandbox")) return sandboxOnly();
      return new ApiError("FORBIDDEN", "This credential may not use this field.");
    },
  },
});

// `extensions.jsonSchema` (here and on fields): what a REST response schema generated from a selection says
// that the GraphQL type cannot (src/rest/openapi-selection.ts).
builder.scalarType("DateTime", {
  description: "ISO 8601 UTC timestamp with milliseconds",
  extensions: { jsonSchema: { type: "string", format: "date-time" } },
  serialize: (value) => (value as Date).toISOString(),
  parseValue: (value) => {
    const date = typeof value === "string" ? parseInstant(value) : null;
    if (!date) throw new GraphQLError(`DateTime must be ${INSTANT_RULE}`);
    return date;
  },
});

builder.scalarType("JSON", { extensions: { jsonSchema: {} }, serialize: (v) => v, parseValue: (v) => v });

builder.scalarType("SafeInt", {
  description: "An integer from 0 to 2^53 − 1, as a JSON number (GraphQL's Int stops at 2^31 − 1)",
  extensions: { jsonSchema: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER } },
  serialize: (value) => Number(value),
  parseValue: (value) => {
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) throw new GraphQLError("SafeInt must be an integer from 0 to 2^53 − 1");
    return value;
  },
});

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
