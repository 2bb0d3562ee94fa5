import { builder } from "../../platform/schema/builder.js";
import { runCommand } from "../../platform/schema/commands.js";
import { EnvironmentEnum, StoreStatusEnum } from "../store/graphql.js";
import { AddressInput } from "../orders/graphql.js";
import { idPath } from "../../platform/schemas.js";
import type { Prisma } from "../../platform/db/prisma.js";
import { createAdminKey, createApplication, createGrant, createStore, revokeGrant, updateStoreProfile } from "./operations.js";
import { SCOPES } from "../../platform/auth/scopes.js";

/** Administrator operations. Every field here requires an admin key. */

export const ScopeEnum = builder.enumType("Scope", {
  values: Object.fromEntries(SCOPES.map((s) => [s.replace(":", "_").toUpperCase(), { value: s, description: s }])),
});

const Application = builder.prismaObject("Application", {
  authScopes: { admin: true },
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    clientId: t.exposeString("clientId"),
    environment: t.expose("environment", { type: EnvironmentEnum }),
    scopes: t.exposeStringList("scopes"),
    status: t.exposeString("status"),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    grants: t.relation("grants"),
  }),
});

const Grant = builder.prismaObject("Grant", {
  authScopes: { admin: true },
  fields: (t) => ({
    id: t.exposeID("id"),
    status: t.exposeString("status"),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    revokedAt: t.expose("revokedAt", { type: "DateTime", nullable: true }),
    store: t.relation("store"),
    application: t.relation("application"),
  }),
});

const CreatedApplication = builder.objectRef<{ application: { id: string }; clientSecret: string }>("CreatedApplication").implement({
  fields: (t) => ({
    application: t.prismaField({
      type: Application,
      resolve: (query, parent, _a, ctx) => ctx.db.application.findUniqueOrThrow({ ...query, where: { id: parent.application.id } }),
    }),
    clientSecret: t.exposeString("clientSecret", { description: "Shown once; only its hash is stored." }),
  }),
});

const CreatedAdminKey = builder.objectRef<{ id: string; name: string; prefix: string; key: string }>("CreatedAdminKey").implement({
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    prefix: t.exposeString("prefix"),
    key: t.exposeString("key", { description: "Shown once; only its hash is stored." }),
  }),
});

const CreateStoreInput = builder.inputType("CreateStoreInput", {
  fields: (t) => ({
    name: t.string({ required: true }),
    environment: t.field({ type: EnvironmentEnum, required: true }),
    slug: t.string(),
    phone: t.string(),
  }),
});

const CreateApplicationInput = builder.inputType("CreateApplicationInput", {
  fields: (t) => ({
    name: t.string({ required: true }),
    environment: t.field({ type: EnvironmentEnum, required: true }),
    scopes: t.field({ type: [ScopeEnum], required: true }),
  }),
});

const UpdateStoreInput = builder.inputType("UpdateStoreInput", {
  description: "Only the fields sent change; the change is reported by store.updated.",
  fields: (t) => ({
    name: t.string(),
    phone: t.string(),
    logo: t.string(),
    isActive: t.boolean(),
    status: t.field({ type: StoreStatusEnum }),
    address: t.field({ type: AddressInput }),
    openingHours: t.field({ type: "JSON", description: '[{ dayOfWeek: 0..6, opens: "HH:MM", closes: "HH:MM" }]' }),
    publicSettings: t.field({ type: "JSON" }),
  }),
});

const GrantInput = builder.inputType("GrantInput", {
  fields: (t) => ({
    clientId: t.string({ required: true }),
    storeId: t.string({ required: true, description: "Store id (uuid) or code." }),
  }),
});

builder.queryFields((t) => ({
  stores: t.prismaField({
    type: ["Store"],
    authScopes: { admin: true },
    args: { environment: t.arg({ type: EnvironmentEnum }) },
    resolve: (query, _r, args, ctx) =>
      ctx.db.store.findMany({ ...query, where: args.environment ? { environment: args.environment } : {}, orderBy: { createdAt: "asc" }, take: 500 }),
  }),
  applications: t.prismaField({
    type: [Application],
    authScopes: { admin: true },
    resolve: (query, _r, _a, ctx) => ctx.db.application.findMany({ ...query, orderBy: { createdAt: "asc" }, take: 500 }),
  }),
}));

builder.mutationFields((t) => ({
  createStore: t.prismaField({
    type: "Store",
    authScopes: { admin: true },
    args: { input: t.arg({ type: CreateStoreInput, required: true }) },
    resolve: async (query, _r, { input }, ctx) => {
      return runCommand(ctx, async (tx) => {
        const store = await createStore(tx, input);
        return tx.store.findUniqueOrThrow({ ...query, where: { id: store.id } });
      });
    },
  }),
  updateStore: t.prismaField({
    type: "Store",
    authScopes: { admin: true },
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateStoreInput, required: true }) },
    resolve: async (query, _r, { id, input }, ctx) => {
      const storeId = id;
      idPath.check({ id: storeId });
      const change = {
        name: input.name ?? undefined,
        phone: input.phone,
        logo: input.logo,
        isActive: input.isActive ?? undefined,
        status: input.status ?? undefined,
        address: input.address === undefined ? undefined : input.address ? { ...input.address } : null,
        openingHours: (input.openingHours ?? undefined) as Prisma.InputJsonArray | undefined,
        publicSettings: (input.publicSettings ?? undefined) as Prisma.InputJsonObject | undefined,
      };
      return runCommand(ctx, async (tx) => {
        const store = await updateStoreProfile(tx, storeId, change);
        return tx.store.findUniqueOrThrow({ ...query, where: { id: store.id } });
      });
    },
  }),
  createApplication: t.field({
    type: CreatedApplication,
    authScopes: { admin: true },
    args: { input: t.arg({ type: CreateApplicationInput, required: true }) },
    resolve: (_r, { input }, ctx) => createApplication(ctx.db, input),
  }),
  createGrant: t.prismaField({
    type: Grant,
    authScopes: { admin: true },
    args: { input: t.arg({ type: GrantInput, required: true }) },
    resolve: async (query, _r, { input }, ctx) => {
      return runCommand(ctx, async (tx) => {
        const grant = await createGrant(tx, input);
        return tx.grant.findUniqueOrThrow({ ...query, where: { id: grant.id } });
      });
    },
  }),
  revokeGrant: t.prismaField({
    type: Grant,
    authScopes: { admin: true },
    args: { input: t.arg({ type: GrantInput, required: true }) },
    resolve: async (query, _r, { input }, ctx) => {
      return runCommand(ctx, async (tx) => {
        const grant = await revokeGrant(tx, input);
        return tx.grant.findUniqueOrThrow({ ...query, where: { id: grant.id } });
      });
    },
  }),
  createAdminKey: t.field({
    type: CreatedAdminKey,
    authScopes: { admin: true },
    args: { name: t.arg.string({ required: true }) },
    resolve: (_r, { name }, ctx) => createAdminKey(ctx.db, name),
  }),
}));
