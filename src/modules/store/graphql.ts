import { builder } from "../../platform/schema/builder.js";
import type { Address } from "./address.js";
import { tenantOf } from "../../platform/schema/context.js";
import { ENVIRONMENTS, STORE_STATUSES } from "./status.js";

export const StoreStatusEnum = builder.enumType("StoreStatus", { values: STORE_STATUSES });
export const EnvironmentEnum = builder.enumType("Environment", { values: ENVIRONMENTS });

export const AddressRef = builder.objectRef<Address>("Address").implement({
  fields: (t) => ({
    street: t.exposeString("street"),
    number: t.exposeString("number"),
    neighborhood: t.exposeString("neighborhood"),
    city: t.exposeString("city"),
    state: t.exposeString("state"),
    postalCode: t.exposeString("postalCode"),
    complement: t.string({ nullable: true, resolve: (a) => a.complement ?? null }),
  }),
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
    address: t.field({ type: AddressRef, nullable: true, resolve: (s) => (s.address as Address | null) ?? null }),
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

builder.queryField("store", (t) =>
  t.prismaField({
    type: Store,
    description: "The token's own store.",
    authScopes: { scope: "merchant:read" },
    resolve: (query, _root, _args, ctx) => ctx.db.store.findUniqueOrThrow({ ...query, where: { id: tenantOf(ctx).storeId } }),
  }),
);
