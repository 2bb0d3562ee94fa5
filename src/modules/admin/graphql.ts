import { builder } from "../../platform/schema/builder.js";
import { runCommand } from "../../platform/schema/commands.js";
import { queryFromInfo } from "@pothos/plugin-prisma";
import { EnvironmentEnum, Store, StoreStatusEnum } from "../store/graphql.js";
import { pageType } from "../../platform/schema/fields.js";
import { paginate, type SortKey } from "../../platform/schema/pagination.js";
import { AddressInput } from "../store/graphql.js";
import { idArgs, PAGE_ARGS } from "../../platform/schemas.js";
import type { Prisma } from "../../platform/db/prisma.js";
import {
  createAdminKey,
  createApplication,
  createGrant,
  createStore,
  listAdminKeys,
  revokeAdminKey,
  revokeGrant,
  rotateClientSecret,
  setApplicationApiVersion,
  setApplicationStatus,
  updateStoreProfile,
} from "./operations.js";
import { ADMIN_ROLES } from "../../platform/auth/admin-keys.js";
import { createPortalLink } from "./portal-links.js";
import { SCOPES } from "../../platform/auth/scopes.js";

/**
 * Administrator operations. Every field here requires an admin key: reads any role (VIEWER and up), changes
 * the ADMIN role.
 */

export const ScopeEnum = builder.enumType("Scope", {
  values: Object.fromEntries(SCOPES.map((s) => [s.replace(":", "_").toUpperCase(), { value: s, description: s }])),
});

const Application = builder.prismaObject("Application", {
  authScopes: { adminRole: "VIEWER" },
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    clientId: t.exposeString("clientId"),
    environment: t.expose("environment", { type: EnvironmentEnum }),
    scopes: t.exposeStringList("scopes"),
    status: t.exposeString("status"),
    apiVersion: t.exposeString("apiVersion", { description: "The API version its requests are answered in without an Api-Version header" }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    grants: t.relation("grants"),
  }),
});

const Grant = builder.prismaObject("Grant", {
  authScopes: { adminRole: "VIEWER" },
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

const ApplicationStatusEnum = builder.enumType("ApplicationStatus", {
  description: "A DISABLED Application gets no tokens, its issued tokens are refused, and its endpoints receive nothing new.",
  values: ["ACTIVE", "DISABLED"] as const,
});

const AdminRoleEnum = builder.enumType("AdminRole", {
  description: "VIEWER reads everything; SUPPORT also replays deliveries and enables or disables endpoints; ADMIN may do everything.",
  values: ADMIN_ROLES,
});

const AdminKey = builder.prismaObject("AdminKey", {
  authScopes: { adminRole: "VIEWER" },
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    role: t.expose("role", { type: AdminRoleEnum }),
    prefix: t.exposeString("prefix", { description: "First 12 characters of the key, to recognize it by." }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    revokedAt: t.expose("revokedAt", { type: "DateTime", nullable: true }),
  }),
});

const CreatedAdminKey = builder.objectRef<{ adminKey: { id: string }; key: string }>("CreatedAdminKey").implement({
  fields: (t) => ({
    key: t.exposeString("key", { description: "Shown once; only its hash is stored." }),
    adminKey: t.prismaField({
      type: AdminKey,
      resolve: (query, parent, _a, ctx) => ctx.db.adminKey.findUniqueOrThrow({ ...query, where: { id: parent.adminKey.id } }),
    }),
  }),
});

const CreateAdminKeyInput = builder.inputType("CreateAdminKeyInput", {
  fields: (t) => ({
    name: t.string({ required: true }),
    role: t.field({ type: AdminRoleEnum, required: true }),
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
    apiVersion: t.string({ description: "The API version it is pinned to (e.g. 2026-12-01); default the latest." }),
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

const CreatePortalLinkInput = builder.inputType("CreatePortalLinkInput", {
  fields: (t) => ({
    clientId: t.string({ required: true }),
    storeId: t.string({ required: true, description: "Store id (uuid) or code." }),
    ttlMinutes: t.int({ description: "How long the link may be used, in minutes: default 60, at most PORTAL_LINK_MAX_TTL_MINUTES (1440)." }),
  }),
});

const PortalLink = builder.objectRef<{ url: string; expiresAt: Date }>("PortalLink").implement({
  description: "A one-time sign-in link to the partner portal; its secret is in the fragment and is shown only here.",
  fields: (t) => ({
    url: t.exposeString("url", { description: "Open it once, before expiresAt: it signs in as the Application on the store." }),
    expiresAt: t.expose("expiresAt", { type: "DateTime" }),
  }),
});

/** Oldest first, as the admin CLI lists them; the primary key breaks ties. */
const OLDEST_FIRST: SortKey[] = [
  { field: "createdAt", direction: "asc" },
  { field: "id", direction: "asc" },
];

const StorePage = pageType("StorePage", Store);
const ApplicationPage = pageType("ApplicationPage", Application);

const pageArgs = builder.args((t) => ({
  limit: t.int({ description: "1..100, default 20" }),
  cursor: t.string({ description: "pagination.nextCursor of the previous page" }),
}));

builder.queryFields((t) => ({
  stores: t.field({
    type: StorePage,
    description: "Every store, oldest first; read one's data with store(id) { orders ... }.",
    authScopes: { adminRole: "VIEWER" },
    args: { ...pageArgs, environment: t.arg({ type: EnvironmentEnum }) },
    input: { args: PAGE_ARGS },
    resolve: (_r, args, ctx, info) => {
      const where: Prisma.StoreWhereInput = args.environment ? { environment: args.environment } : {};
      const query = queryFromInfo({ context: ctx, info, path: ["data"] });
      return paginate({
        limit: args.limit,
        cursor: args.cursor,
        sort: OLDEST_FIRST,
        findCursor: (id) => ctx.db.store.findUnique({ where: { id }, select: { id: true, createdAt: true } }),
        findMany: ({ after, orderBy, take }) => ctx.db.store.findMany({ ...query, where: after ? { AND: [where, after] } : where, orderBy, take }),
      });
    },
  }),
  applications: t.field({
    type: ApplicationPage,
    description: "Every Application, oldest first.",
    authScopes: { adminRole: "VIEWER" },
    args: pageArgs,
    input: { args: PAGE_ARGS },
    resolve: (_r, args, ctx, info) => {
      const query = queryFromInfo({ context: ctx, info, path: ["data"] });
      return paginate({
        limit: args.limit,
        cursor: args.cursor,
        sort: OLDEST_FIRST,
        findCursor: (id) => ctx.db.application.findUnique({ where: { id }, select: { id: true, createdAt: true } }),
        findMany: ({ after, orderBy, take }) => ctx.db.application.findMany({ ...query, ...(after ? { where: after } : {}), orderBy, take }),
      });
    },
  }),
  adminKeys: t.prismaField({
    type: [AdminKey],
    authScopes: { adminRole: "VIEWER" },
    description: "Stored admin keys, revoked ones too, oldest first (ADMIN_API_KEY is configuration, not listed).",
    // An AdminKey has no relations, so there is nothing of the query's selection to load beyond its columns.
    resolve: (_query, _r, _a, ctx) => listAdminKeys(ctx.db),
  }),
}));

builder.mutationFields((t) => ({
  createStore: t.prismaField({
    type: "Store",
    authScopes: { adminRole: "ADMIN" },
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
    authScopes: { adminRole: "ADMIN" },
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateStoreInput, required: true }) },
    input: idArgs,
    resolve: async (query, _r, { id, input }, ctx) => {
      const storeId = id;
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
    authScopes: { adminRole: "ADMIN" },
    args: { input: t.arg({ type: CreateApplicationInput, required: true }) },
    resolve: (_r, { input }, ctx) => createApplication(ctx.db, input),
  }),
  createGrant: t.prismaField({
    type: Grant,
    authScopes: { adminRole: "ADMIN" },
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
    authScopes: { adminRole: "ADMIN" },
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
    authScopes: { adminRole: "ADMIN" },
    args: { input: t.arg({ type: CreateAdminKeyInput, required: true }) },
    resolve: async (_r, { input }, ctx) => {
      const { key, adminKey } = await createAdminKey(ctx.db, input);
      return { key, adminKey };
    },
  }),
  createPortalLink: t.field({
    type: PortalLink,
    // ADMIN only: the link signs in with every scope of the Application, writes included, which SUPPORT may not do.
    authScopes: { adminRole: "ADMIN" },
    description: "A one-time link to /portal that signs in as the Application on the store; the Application needs an active grant on it.",
    args: { input: t.arg({ type: CreatePortalLinkInput, required: true }) },
    resolve: (_r, { input }, ctx) => {
      const createdBy = ctx.principal.kind === "admin" ? (ctx.principal.adminKeyId ?? "ADMIN_API_KEY") : "unknown";
      return createPortalLink(ctx.db, input, {
        baseUrl: ctx.services.issuer,
        maxTtlMinutes: ctx.services.config.PORTAL_LINK_MAX_TTL_MINUTES,
        createdBy,
      });
    },
  }),
  setApplicationStatus: t.prismaField({
    type: Application,
    authScopes: { adminRole: "ADMIN" },
    args: { clientId: t.arg.string({ required: true }), status: t.arg({ type: ApplicationStatusEnum, required: true }) },
    resolve: async (query, _r, { clientId, status }, ctx) => {
      const app = await setApplicationStatus(ctx.db, clientId, status);
      return ctx.db.application.findUniqueOrThrow({ ...query, where: { id: app.id } });
    },
  }),
  setApplicationApiVersion: t.prismaField({
    type: Application,
    description: "Pins the Application to an API version; its next request on any process is answered in it.",
    authScopes: { adminRole: "ADMIN" },
    args: { clientId: t.arg.string({ required: true }), apiVersion: t.arg.string({ required: true }) },
    resolve: async (query, _r, { clientId, apiVersion }, ctx) => {
      const app = await setApplicationApiVersion(ctx.db, clientId, apiVersion);
      return ctx.db.application.findUniqueOrThrow({ ...query, where: { id: app.id } });
    },
  }),
  rotateApplicationSecret: t.field({
    type: CreatedApplication,
    authScopes: { adminRole: "ADMIN" },
    description: "A new client secret, in this response only; the previous one stops working. Issued tokens stay valid until they expire.",
    args: { clientId: t.arg.string({ required: true }) },
    resolve: (_r, { clientId }, ctx) => rotateClientSecret(ctx.db, clientId),
  }),
  revokeAdminKey: t.prismaField({
    type: AdminKey,
    authScopes: { adminRole: "ADMIN" },
    description: "Refuses the key from now on; revoking a revoked key changes nothing.",
    args: { id: t.arg.id({ required: true }) },
    input: idArgs,
    resolve: async (query, _r, { id }, ctx) => {
      const revoked = await revokeAdminKey(ctx.db, String(id));
      return ctx.db.adminKey.findUniqueOrThrow({ ...query, where: { id: revoked.id } });
    },
  }),
}));
