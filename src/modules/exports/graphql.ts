import { queryFromInfo } from "@pothos/plugin-prisma";
import { builder } from "../../platform/schema/builder.js";
import { tenantOf, type Context } from "../../platform/schema/context.js";
import { runCommand } from "../../platform/schema/commands.js";
import { pageType } from "../../platform/schema/fields.js";
import { paginate, type SortKey } from "../../platform/schema/pagination.js";
import { idArgs, PAGE_ARGS } from "../../platform/schemas.js";
import type { Export } from "../../platform/db/prisma.js";
import { EXPORT_RESOURCES } from "../events/operational.js";
import { CreateExportBody } from "./schemas.js";
import { checkExportScope, createExport, type ExportLink, exportLink, type ExportOwner, findExport, ownerWhere, resourceOf } from "./service.js";

/** Bulk exports (extension to the contract): a store's orders, customers or products as one file, then the feed. */

const ExportResourceEnum = builder.enumType("ExportResource", { values: EXPORT_RESOURCES });
const ExportStatusEnum = builder.enumType("ExportStatus", { values: ["queued", "running", "completed", "failed"] as const });

/** Partners read their Application's exports on their store; administrators read every one (dashboards). */
const EXPORT_READ = { partner: true, adminRole: "VIEWER" } as const;

function ownerOf(ctx: Context): ExportOwner {
  if (ctx.principal.kind === "admin") return null;
  const { applicationId, storeId } = tenantOf(ctx);
  return { applicationId, storeId };
}

/** One link per export and response, so `url` and `expiresAt` agree to the second. */
const links = new WeakMap<Context, Map<string, ExportLink | null>>();

function linkOf(ctx: Context, row: Export): ExportLink | null {
  const mine = links.get(ctx) ?? new Map<string, ExportLink | null>();
  links.set(ctx, mine);
  if (!mine.has(row.id)) mine.set(row.id, exportLink(ctx.services.config, ctx.services.box, row, Date.now()));
  return mine.get(row.id) ?? null;
}

const bigint = (value: bigint | null) => (value === null ? null : Number(value));

export const ExportRef = builder.prismaObject("Export", {
  description: "A bulk export: one resource of the store as gzip-compressed JSON Lines, read from one snapshot (extension to the contract).",
  fields: (t) => ({
    id: t.exposeID("id"),
    resource: t.field({ type: ExportResourceEnum, resolve: (e) => resourceOf(e.resource) }),
    updatedSince: t.expose("updatedSince", { type: "DateTime", nullable: true, description: "Only objects changed at or after it were exported" }),
    status: t.expose("status", { type: ExportStatusEnum, description: "queued, running (one export of a store at a time), completed or failed" }),
    objectCount: t.exposeInt("objectCount", { nullable: true, description: "Lines in the file, once completed" }),
    bytes: t.field({ type: "SafeInt", nullable: true, description: "Size of the gzip file, once completed", resolve: (e) => bigint(e.bytes) }),
    sequence: t.field({
      type: "SafeInt",
      nullable: true,
      description: "The store's event sequence at the snapshot the file was read from: continue with the event feed after it",
      resolve: (e) => bigint(e.sequence),
    }),
    apiVersion: t.exposeString("apiVersion", { description: "Each line is the object as its GET-by-id route answers it in this version" }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    completedAt: t.expose("completedAt", { type: "DateTime", nullable: true }),
    expiresAt: t.field({
      type: "DateTime",
      nullable: true,
      description: "When `url` stops working (EXPORT_URL_TTL_SECONDS after this answer); read the export again for a fresh one",
      resolve: (e, _args, ctx) => linkOf(ctx, e)?.expiresAt ?? null,
    }),
    url: t.string({
      nullable: true,
      description: "Signed link to the file, usable without a token until expiresAt; null until completed and after the file is removed",
      resolve: (e, _args, ctx) => linkOf(ctx, e)?.url ?? null,
    }),
    error: t.exposeString("error", { nullable: true, description: "Why the export failed" }),
  }),
});

export const ExportPage = pageType("ExportPage", ExportRef);

const NEWEST_FIRST: SortKey<"createdAt" | "id">[] = [
  { field: "createdAt", direction: "desc" },
  { field: "id", direction: "desc" },
];

builder.queryFields((t) => ({
  exports: t.field({
    type: ExportPage,
    description: "Extension to the contract: bulk exports, newest first; a partner token's own Application's on its store, for administrators every one.",
    authScopes: EXPORT_READ,
    args: {
      limit: t.arg.int({ description: "1..100, default 20" }),
      cursor: t.arg.string({ description: "pagination.nextCursor of the previous page" }),
    },
    input: { args: PAGE_ARGS },
    resolve: (_root, args, ctx, info) => {
      const where = ownerWhere(ownerOf(ctx));
      const query = queryFromInfo({ context: ctx, info, path: ["data"] });
      return paginate({
        limit: args.limit,
        cursor: args.cursor,
        sort: NEWEST_FIRST,
        findCursor: (id) => ctx.db.export.findFirst({ where: { id, ...where }, select: { id: true, createdAt: true } }),
        findMany: ({ after, orderBy, take }) => ctx.db.export.findMany({ ...query, where: after ? { AND: [where, after] } : where, orderBy, take }),
      });
    },
  }),
  export: t.prismaField({
    type: ExportRef,
    description: "Extension to the contract: one bulk export; another Application's or store's is NOT_FOUND.",
    authScopes: EXPORT_READ,
    args: { id: t.arg.id({ required: true }) },
    input: idArgs,
    resolve: (_query, _root, { id }, ctx) => findExport(ctx.db, ownerOf(ctx), id),
  }),
}));

builder.mutationFields((t) => ({
  createExport: t.prismaField({
    type: ExportRef,
    description:
      "Extension to the contract: queues a bulk export of the token's store, answered in the request's API version; needs the resource's read scope. " +
      "One export of a store runs at a time; export.completed or export.failed follows.",
    authScopes: { partner: true },
    args: {
      resource: t.arg({ type: ExportResourceEnum, required: true }),
      updatedSince: t.arg({ type: "DateTime", description: "Only objects changed at or after it" }),
    },
    input: { object: { schema: CreateExportBody } },
    resolve: (_query, _root, args, ctx) => {
      const principal = tenantOf(ctx);
      checkExportScope(principal, args.resource);
      const input = { resource: args.resource, updatedSince: args.updatedSince ?? null, apiVersion: ctx.answerVersion ?? principal.apiVersion };
      return runCommand(ctx, (tx) => createExport(tx, ctx.services.config, principal, input));
    },
  }),
}));
