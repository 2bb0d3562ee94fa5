import { timingSafeEqual } from "node:crypto";
import type { Config } from "../../platform/config.js";
import type { SecretBox } from "../../platform/crypto/encryption.js";
import { ApiError, insufficientScope, notFound } from "../../platform/errors.js";
import type { Export, Prisma, Tx } from "../../platform/db/prisma.js";
import type { PartnerPrincipal } from "../../platform/auth/principal.js";
import type { Scope } from "../../platform/auth/scopes.js";
import type { ApiVersion } from "../../platform/versions.js";
import type { EXPORT_RESOURCES } from "../events/operational.js";
import { enqueueExport } from "./sql.js";

export type ExportResource = (typeof EXPORT_RESOURCES)[number];

/** The scope that reads each resource: the one its export needs. */
export const EXPORT_SCOPES: Record<ExportResource, Scope> = { orders: "orders:read", customers: "customers:read", products: "catalog:read" };

export const EXPORT_TASK = "run_export";

/** Whose exports a caller sees: a partner its Application's on its store; an administrator every one (null). */
export type ExportOwner = { applicationId: string; storeId: string } | null;

/** The one filter every export read starts from. */
export const ownerWhere = (owner: ExportOwner): Prisma.ExportWhereInput => owner ?? {};

export function resourceOf(value: string): ExportResource {
  if (value === "orders" || value === "customers" || value === "products") return value;
  throw new Error(`export of unknown resource ${value}`);
}

/** The token must read what it exports: 403 naming the resource's scope otherwise. */
export function checkExportScope(principal: PartnerPrincipal, resource: ExportResource): void {
  const scope = EXPORT_SCOPES[resource];
  if (!principal.scopes.has(scope)) throw insufficientScope(scope, `An export of ${resource}`);
}

/**
 * Records an export, queued, and its job in the caller's transaction (so an idempotent request's record commits with
 * them). One export of a store runs at a time (claimExport): the others wait their turn, queued.
 */
export async function createExport(
  tx: Tx,
  config: Config,
  principal: PartnerPrincipal,
  input: { resource: ExportResource; updatedSince: Date | null; apiVersion: ApiVersion },
): Promise<Export> {
  const row = await tx.export.create({
    data: {
      applicationId: principal.applicationId,
      storeId: principal.storeId,
      resource: input.resource,
      updatedSince: input.updatedSince,
      apiVersion: input.apiVersion,
    },
  });
  await tx.$queryRaw(enqueueExport(EXPORT_TASK, row.id, config.EXPORT_MAX_ATTEMPTS));
  return row;
}

export async function findExport(db: Tx, owner: ExportOwner, id: string): Promise<Export> {
  const row = await db.export.findFirst({ where: { id, ...ownerWhere(owner) } });
  if (!row) throw notFound("export", id);
  return row;
}

/** The download link of an export: the API address of its file, signed, and when the signature stops working. */
export interface ExportLink {
  url: string;
  expiresAt: Date;
}

/** Links are signed with a key of their own, derived from the master key. */
const LINK_PURPOSE = "export file link v1";

const signature = (box: SecretBox, id: string, expires: number) => box.mac(LINK_PURPOSE, `${id}.${expires}`).toString("base64url");

export const exportFilePath = (id: string) => `/public/v1/exports/${id}/file`;

/**
 * A completed export's link, valid EXPORT_URL_TTL_SECONDS from `now` (to the second) and never past the file's
 * removal; null for an export without a file.
 */
export function exportLink(config: Config, box: SecretBox, row: Pick<Export, "id" | "status" | "removeAt">, now: number): ExportLink | null {
  if (row.status !== "completed" || !row.removeAt) return null;
  const expires = Math.min(Math.floor(now / 1000) + config.EXPORT_URL_TTL_SECONDS, Math.floor(row.removeAt.getTime() / 1000));
  if (expires * 1000 <= now) return null;
  const query = new URLSearchParams({ expires: String(expires), signature: signature(box, row.id, expires) });
  return { url: `${config.publicBaseUrl}${exportFilePath(row.id)}?${query}`, expiresAt: new Date(expires * 1000) };
}

/** A link refused: the same problem whether it was altered, made for another export, or has expired. */
const badLink = (detail: string) => new ApiError("FORBIDDEN", `${detail} Get a fresh link: GET /public/v1/exports/{id} answers one in \`url\`.`);

/** Checks a link's `expires` and `signature` for export `id`; a link that is not one we signed, or expired, is 403. */
export function checkLink(box: SecretBox, id: string, expires: string | null, given: string | null, now: number): void {
  if (!expires || !given || !/^\d{1,12}$/.test(expires)) throw badLink("This download link is incomplete or altered.");
  const expected = Buffer.from(signature(box, id, Number(expires)));
  const actual = Buffer.from(given);
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) throw badLink("This download link is altered or not for this export.");
  if (Number(expires) * 1000 <= now) throw badLink("This download link has expired.");
}
