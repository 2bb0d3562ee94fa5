import { builder } from "../../platform/schema/builder.js";
import { ADDRESS_FIELD_NAMES, OPTIONAL_ADDRESS_FIELD, storedAddress, type Address, type AddressField } from "./address.js";
import { tenantOf, type Context } from "../../platform/schema/context.js";
import type { Prisma } from "../../platform/db/prisma.js";
import { ApiError, invalidRequest } from "../../platform/errors.js";
import { jsonArgs } from "../../platform/validate.js";
import { storeLookupInput } from "./schemas.js";
import { ENVIRONMENTS, STORE_STATUSES } from "./status.js";

export const StoreStatusEnum = builder.enumType("StoreStatus", { values: STORE_STATUSES });
export const EnvironmentEnum = builder.enumType("Environment", { values: ENVIRONMENTS });

export const AddressRef = builder.objectRef<Address>("Address").implement({
  fields: (t) =>
    Object.fromEntries(
      ADDRESS_FIELD_NAMES.map((f) => [f, f === OPTIONAL_ADDRESS_FIELD ? t.string({ nullable: true, resolve: (a) => a[f] ?? null }) : t.exposeString(f)]),
    ),
});

/** Written out, as Pothos types an input's fields from the literal; `satisfies` holds it to the address's one list. */
export const AddressInput = builder.inputType("AddressInput", {
  fields: (t) =>
    ({
      street: t.string({ required: true }),
      number: t.string({ required: true }),
      neighborhood: t.string({ required: true }),
      city: t.string({ required: true }),
      state: t.string({ required: true }),
      postalCode: t.string({ required: true }),
      complement: t.string(),
    }) satisfies Record<AddressField, unknown>,
});

interface OpeningHoursShape {
  dayOfWeek: number;
  opens: string;
  closes: string;
}

const OpeningHoursRef = builder.objectRef<OpeningHoursShape>("OpeningHours").implement({
  description: "One opening interval; dayOfWeek 0 is Sunday. Times are HH:MM in the store's timezone.",
  fields: (t) => ({
    dayOfWeek: t.exposeInt("dayOfWeek", { extensions: { jsonSchema: { minimum: 0, maximum: 6 } } }),
    opens: t.exposeString("opens"),
    closes: t.exposeString("closes"),
  }),
});

/** The JSON a store publishes as publicSettings: a JSON scalar to GraphQL, these known keys to REST. */
const PUBLIC_SETTINGS = {
  type: "object",
  additionalProperties: true,
  properties: {
    currency: { type: "string", description: "ISO 4217 code, e.g. BRL" },
    timezone: { type: "string", description: "IANA zone the opening hours are in, e.g. America/Sao_Paulo" },
    acceptsDelivery: { type: "boolean" },
    acceptsPickup: { type: "boolean" },
    minimumOrder: { type: "number", description: "Smallest order total accepted, in currency units" },
  },
};

export const Store = builder.prismaObject("Store", {
  fields: (t) => ({
    id: t.exposeID("id"),
    code: t.exposeString("code", { description: "Alphanumeric store code: the token's tenant_id." }),
    environment: t.expose("environment", { type: EnvironmentEnum }),
    name: t.exposeString("name"),
    slug: t.exposeString("slug"),
    logo: t.exposeString("logo", { nullable: true }),
    phone: t.exposeString("phone", { nullable: true }),
    isActive: t.exposeBoolean("isActive"),
    status: t.expose("status", { type: StoreStatusEnum }),
    address: t.field({ type: AddressRef, nullable: true, resolve: (s) => storedAddress(s.address) }),
    openingHours: t.field({ type: [OpeningHoursRef], resolve: (s) => (s.openingHours as OpeningHoursShape[] | null) ?? [] }),
    publicSettings: t.field({
      type: "JSON",
      description: "Settings the store publishes; the keys below are the usual ones, a store may add others",
      extensions: { jsonSchema: PUBLIC_SETTINGS },
      resolve: (s) => s.publicSettings ?? {},
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

/** The store `store(id, code)` answers for this credential, as a filter; the arguments are checked here. */
function storeWhere(ctx: Context, args: { id?: string | null; code?: string | null }): Prisma.StoreWhereInput {
  storeLookupInput.check(jsonArgs({ id: args.id, code: args.code }));
  const named: Prisma.StoreWhereInput = { ...(args.id ? { id: args.id } : {}), ...(args.code ? { code: args.code } : {}) };
  if (ctx.principal.kind === "partner") return { AND: [{ id: ctx.principal.storeId }, named] };
  if (!args.id && !args.code) {
    throw invalidRequest("An administrator names the store: pass its id or its code (the stores field lists them).", [
      { field: "id", code: "REQUIRED", message: "`id` or `code` is required" },
    ]);
  }
  return named;
}

builder.queryField("store", (t) =>
  t.prismaField({
    type: Store,
    description:
      "A store: without arguments the token's own; another store's id or code is NOT_FOUND for a partner token. An administrator names any store by id or code.",
    authScopes: { scope: "merchant:read", adminRole: "VIEWER" },
    args: { id: t.arg.id(), code: t.arg.string({ description: "The store code (a token's tenant_id)" }) },
    resolve: async (query, _root, args, ctx) => {
      const store = await ctx.db.store.findFirst({ ...query, where: storeWhere(ctx, args) });
      if (!store) {
        // Without arguments only a partner gets here (an administrator must name one).
        const named = args.id ? `id ${args.id}` : `code ${args.code ?? tenantOf(ctx).storeCode}`;
        throw new ApiError("NOT_FOUND", `No store with ${named} is visible to this credential.`);
      }
      return store;
    },
  }),
);
