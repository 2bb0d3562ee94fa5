import { randomBytes } from "node:crypto";
import { hashSecret, randomToken } from "../../platform/crypto/hash.js";
import { invalidRequest, ApiError } from "../../platform/errors.js";
import { isScope } from "../../platform/auth/scopes.js";
import { newAdminKey } from "../../platform/auth/admin-keys.js";
import { Prisma, type AdminRole, type ApplicationStatus, type Environment, type Tx } from "../../platform/db/prisma.js";
import { emitEvent } from "../../platform/events/outbox.js";
import { isUuid } from "../../platform/uuid.js";
import { apiVersionOf, LATEST_API_VERSION } from "../../platform/versions.js";

/** Operator actions, shared by the admin GraphQL mutations and the admin CLI so both behave alike. */

const CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

function storeCode(): string {
  const bytes = randomBytes(10);
  return Array.from(bytes, (b) => CODE_ALPHABET[b % CODE_ALPHABET.length]).join("");
}

function slugify(name: string): string {
  return (
    name
      .normalize("NFKD")
      .replace(/[\u0300-\u036f]/g, "")
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "")
      .slice(0, 60) || "store"
  );
}

export interface CreateStoreInput {
  name: string;
  environment: Environment;
  slug?: string | null;
  phone?: string | null;
}

export async function createStore(db: Tx, input: CreateStoreInput) {
  if (!input.name.trim()) throw invalidRequest("name must not be empty", [{ field: "name", code: "REQUIRED", message: "must not be empty" }]);
  const base = input.slug ? slugify(input.slug) : slugify(input.name);
  for (let i = 0; i < 5; i++) {
    const slug =
      i === 0
        ? base
        : `${base}-${randomToken(3)
            .toLowerCase()
            .replace(/[^a-z0-9]/g, "x")}`;
    const taken = await db.store.findUnique({ where: { environment_slug: { environment: input.environment, slug } } });
    if (taken) {
      if (input.slug) throw new ApiError("CONFLICT", `slug "${slug}" is already used in ${input.environment}`);
      continue;
    }
    return db.store.create({
      data: { name: input.name.trim(), environment: input.environment, slug, phone: input.phone ?? null, code: storeCode() },
    });
  }
  throw new ApiError("CONFLICT", "could not find a free slug; pass one explicitly");
}

export interface CreateApplicationInput {
  name: string;
  environment: Environment;
  scopes: string[];
  /** The API version it is pinned to; default the latest. */
  apiVersion?: string | null;
}

export async function createApplication(db: Tx, input: CreateApplicationInput) {
  const bad = input.scopes.filter((s) => !isScope(s));
  if (bad.length) {
    throw invalidRequest(
      `Unknown scope(s): ${bad.join(", ")}`,
      bad.map((s) => ({ field: "scopes", code: "UNKNOWN_SCOPE", message: s })),
    );
  }
  if (!input.name.trim()) throw invalidRequest("name must not be empty", [{ field: "name", code: "REQUIRED", message: "must not be empty" }]);
  const apiVersion = input.apiVersion ? apiVersionOf(input.apiVersion, "apiVersion") : LATEST_API_VERSION;
  const clientSecret = `cs_${randomToken(32)}`;
  const application = await db.application.create({
    data: {
      name: input.name.trim(),
      environment: input.environment,
      scopes: [...new Set(input.scopes)],
      apiVersion,
      clientId: `${input.environment === "SANDBOX" ? "sbx" : "prd"}_${randomToken(15)}`,
      clientSecretHash: await hashSecret(clientSecret),
    },
  });
  return { application, clientSecret };
}

async function applicationOf(db: Tx, clientId: string) {
  const app = await db.application.findUnique({ where: { clientId } });
  if (!app) throw new ApiError("NOT_FOUND", `no Application with clientId ${clientId}`);
  return app;
}

/** A store by its id (uuid) or its code (tenant_id), as operators name it. */
export async function storeOf(db: Tx, storeId: string) {
  const store = isUuid(storeId) ? await db.store.findUnique({ where: { id: storeId } }) : await db.store.findUnique({ where: { code: storeId } });
  if (!store) throw new ApiError("NOT_FOUND", `no store with id or code ${storeId}`);
  return store;
}

async function appAndStore(db: Tx, clientId: string, storeId: string) {
  return { app: await applicationOf(db, clientId), store: await storeOf(db, storeId) };
}

/**
 * Disables or re-enables an Application. A disabled one gets no tokens, its tokens already issued are refused at
 * once (the grant rule reads the status on every request), and its endpoints receive no new deliveries.
 */
/**
 * Pins an Application to an API version: its next request on any process is answered in it (the pin is read with
 * the grant, whose cache every process clears when an Application changes).
 */
export async function setApplicationApiVersion(db: Tx, clientId: string, apiVersion: string) {
  const version = apiVersionOf(apiVersion, "apiVersion");
  const app = await applicationOf(db, clientId);
  return db.application.update({ where: { id: app.id }, data: { apiVersion: version } });
}

export async function setApplicationStatus(db: Tx, clientId: string, status: ApplicationStatus) {
  const app = await applicationOf(db, clientId);
  return db.application.update({ where: { id: app.id }, data: { status } });
}

/**
 * A new client secret for an Application; the old one stops working at once. Tokens already issued stay valid
 * until they expire (disable the Application to cut them off). The secret is returned once, stored as a hash.
 */
export async function rotateClientSecret(db: Tx, clientId: string) {
  const app = await applicationOf(db, clientId);
  const clientSecret = `cs_${randomToken(32)}`;
  const application = await db.application.update({ where: { id: app.id }, data: { clientSecretHash: await hashSecret(clientSecret) } });
  return { application, clientSecret };
}

/** Grants, oldest first, optionally of one store (id or code) and/or one Application (client_id). */
export async function listGrants(db: Tx, filter: { store?: string; clientId?: string }) {
  const storeId = filter.store ? (await storeOf(db, filter.store)).id : undefined;
  const applicationId = filter.clientId ? (await applicationOf(db, filter.clientId)).id : undefined;
  return db.grant.findMany({
    where: { ...(storeId ? { storeId } : {}), ...(applicationId ? { applicationId } : {}) },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    select: {
      id: true,
      status: true,
      createdAt: true,
      revokedAt: true,
      store: { select: { id: true, code: true, name: true } },
      application: { select: { clientId: true, name: true, status: true } },
    },
  });
}

export async function createGrant(db: Tx, input: { clientId: string; storeId: string }) {
  const { app, store } = await appAndStore(db, input.clientId, input.storeId);
  if (app.environment !== store.environment) {
    throw new ApiError("UNPROCESSABLE_ENTITY", `a ${app.environment} Application cannot be granted a ${store.environment} store`);
  }
  return db.grant.upsert({
    where: { applicationId_storeId: { applicationId: app.id, storeId: store.id } },
    create: { applicationId: app.id, storeId: store.id },
    update: { status: "ACTIVE", revokedAt: null },
  });
}

export async function revokeGrant(db: Tx, input: { clientId: string; storeId: string }) {
  const { app, store } = await appAndStore(db, input.clientId, input.storeId);
  const grant = await db.grant.findUnique({ where: { applicationId_storeId: { applicationId: app.id, storeId: store.id } } });
  if (!grant) throw new ApiError("NOT_FOUND", "no such grant");
  return db.grant.update({ where: { id: grant.id }, data: { status: "REVOKED", revokedAt: new Date() } });
}

/** A new admin key with its role; the key is returned once, stored as a hash. */
export async function createAdminKey(db: Tx, input: { name: string; role: AdminRole }) {
  if (!input.name.trim()) throw invalidRequest("name must not be empty", [{ field: "name", code: "REQUIRED", message: "must not be empty" }]);
  const { key, keyHash, prefix } = newAdminKey();
  const adminKey = await db.adminKey.create({ data: { name: input.name.trim(), role: input.role, keyHash, prefix } });
  return { key, adminKey };
}

/** Stored admin keys, revoked ones too, oldest first. */
export function listAdminKeys(db: Tx) {
  return db.adminKey.findMany({ orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
}

/** Revokes an admin key from its next request on; a key revoked before keeps its first revocation time. */
export async function revokeAdminKey(db: Tx, id: string) {
  const key = await db.adminKey.findUnique({ where: { id } });
  if (!key) throw new ApiError("NOT_FOUND", `no admin key ${id}`);
  if (key.revokedAt) return key;
  return db.adminKey.update({ where: { id }, data: { revokedAt: new Date() } });
}

export interface StoreProfileChange {
  name?: string;
  phone?: string | null;
  logo?: string | null;
  isActive?: boolean;
  status?: "OPEN" | "CLOSED" | "PAUSED";
  address?: Prisma.InputJsonObject | null;
  openingHours?: Prisma.InputJsonArray;
  publicSettings?: Prisma.InputJsonObject;
}

/** Changes a store's profile and reports it with store.updated, in the caller's transaction. */
export async function updateStoreProfile(tx: Tx, storeId: string, change: StoreProfileChange) {
  const fields = Object.entries(change)
    .filter(([, v]) => v !== undefined)
    .map(([k]) => k);
  if (fields.length === 0) throw invalidRequest("Nothing to change.", [{ field: "input", code: "REQUIRED", message: "send at least one field" }]);
  const { address, ...rest } = change;
  const store = await tx.store.update({
    where: { id: storeId },
    data: { ...rest, ...(address !== undefined ? { address: address ?? Prisma.DbNull } : {}) },
  });
  await emitEvent(tx, storeId, "store.updated", { storeId, changed: fields });
  return store;
}
