import { apiVersionOf } from "../../platform/versions.js";
import type { PartnerPrincipal } from "../../platform/auth/principal.js";
import type { Scope } from "../../platform/auth/scopes.js";
import { Prisma, type Environment } from "../../platform/db/prisma.js";
import { ALL_EVENTS } from "./schemas.js";
import type { Transact, Tx, WebhookEndpointStatus } from "../../platform/db/prisma.js";
import type { SecretBox } from "../../platform/crypto/encryption.js";
import { EVENT_SCOPES, isEventType } from "../events/types.js";
import { forbidden, insufficientScope, invalidRequest, notFound, unprocessable } from "../../platform/errors.js";
import type { Services } from "../../platform/services.js";
import type { WaitOutside } from "../../platform/outside.js";
import { MAX_ENDPOINTS_PER_OWNER, ROTATION_OVERLAP_MS } from "./policy.js";
import { generateWebhookSecret, secretPrefix } from "./secret.js";
import { checkHost, checkWebhookUrl, resolveHost } from "./url-safety.js";
import {
  brokerDestination,
  givesDestinationFields,
  httpFieldsOnly,
  storedSettings,
  type DestinationInput,
  type StoredDestination,
} from "./destinations/settings.js";
import { badField } from "./destinations/types.js";
import { DRILL_FIELDS, type Drill } from "./drill.js";
import { lockActiveGrant, rotateEndpointSecret } from "./sql/endpoints.js";

/**
 * Whose webhook rows a caller may touch: a partner its own (Application, Store), an administrator any (null).
 * Every lookup below filters by it, so there is no way to load another tenant's endpoint or delivery.
 */
export type Owner = { applicationId: string; storeId: string } | null;

export function ownerWhere(owner: Owner): { applicationId?: string; storeId?: string } {
  return owner ?? {};
}

/**
 * The 422 every send an INACTIVE endpoint is asked for answers (a test, a replay, a recover): it receives nothing. Who
 * can change that depends on who stopped it.
 */
export function inactiveEndpoint(endpoint: { id: string; disabledByAdmin: boolean }) {
  const fix = endpoint.disabledByAdmin
    ? "an administrator set it INACTIVE, and only an administrator can set it ACTIVE again"
    : "set it ACTIVE first (PATCH /public/v1/webhooks/{id})";
  return unprocessable(`Webhook endpoint ${endpoint.id} is INACTIVE and receives nothing; ${fix}.`, [
    { field: "endpointId", code: "ENDPOINT_INACTIVE", message: "the endpoint is INACTIVE" },
  ]);
}

export interface EndpointInput extends DestinationInput {
  events: readonly string[];
  /** "store": the store's events one at a time in sequence order. */
  ordering?: string | null;
  /** Deliveries per second at most; WEBHOOK_ENDPOINT_RATE when not given. */
  rateLimit?: number | null;
  /** The API version deliveries are rendered in; the Application's pin when not given. */
  apiVersion?: string | null;
}

/**
 * Checks a webhook URL the partner gave. Resolving a host name waits on DNS outside our database: it is one of the
 * Application's calls out (429 past WEBHOOK_TEST_CONCURRENCY) and holds no admission slot meanwhile.
 */
async function checkUrl(services: Services, environment: Environment, url: string, caller: { applicationId: string; waitOutside: WaitOutside }): Promise<void> {
  const check = await checkWebhookUrl(url, {
    environment,
    allowPrivateNetworks: services.config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    resolve: (host) => services.outsideCalls.run(caller.applicationId, caller.waitOutside, () => resolveHost(host)),
  });
  if (check.ok) return;
  const violation = [{ field: "url", code: check.code, message: check.message }];
  // A string that is not a URL is a malformed request; a URL we refuse to call is a business rule.
  throw check.code === "INVALID_URL" ? invalidRequest(check.message, violation) : unprocessable(check.message, violation);
}

type Caller = { applicationId: string; waitOutside: WaitOutside };

/** A broker host checked by the webhook URL network rules, resolved as one of the Application's calls out. */
function hostChecker(services: Services, caller: Caller) {
  return (host: string) =>
    checkHost(host, {
      allowPrivateNetworks: services.config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
      resolve: (name) => services.outsideCalls.run(caller.applicationId, caller.waitOutside, () => resolveHost(name)),
    });
}

/**
 * Where a new endpoint's deliveries go (`base`: the settings a PATCH starts from): an http URL checked as ever, or a
 * broker's settings checked by its type.
 */
async function destinationFrom(
  services: Services,
  environment: Environment,
  input: DestinationInput,
  base: Record<string, unknown>,
  caller: Caller,
): Promise<StoredDestination> {
  const type = input.type ?? "http";
  if (type !== "http") return brokerDestination(type, input, base, services.box, hostChecker(services, caller));
  httpFieldsOnly(input);
  if (!input.url) throw badField("url", "is required for an http endpoint");
  await checkUrl(services, environment, input.url, caller);
  return { type: "http", url: input.url, shown: null, ciphertext: null };
}

/** The columns an endpoint's destination is stored in. */
function destinationColumns(d: StoredDestination) {
  return { type: d.type, url: d.url, destination: d.shown ?? Prisma.DbNull, destinationCiphertext: d.ciphertext };
}

/**
 * Registers an endpoint for the token's (Application, Store) and returns its secret, the only time it is
 * ever visible (stored encrypted). The caller has checked the input (400: the endpoint's body schema); then
 * scopes (403), URL and limit (422). The URL check resolves the host name before `transact` starts the writes'
 * transaction.
 */
export async function createEndpoint(services: Services, principal: PartnerPrincipal, input: EndpointInput, transact: Transact, waitOutside: WaitOutside) {
  const events = subscription(input.events, (scope) => principal.scopes.has(scope));
  const destination = await destinationFrom(services, principal.environment, input, {}, { applicationId: principal.applicationId, waitOutside });

  const secret = generateWebhookSecret();
  const owner = { applicationId: principal.applicationId, storeId: principal.storeId };
  const endpoint = await transact(async (tx) => {
    // The Grant row serialises concurrent creations of one owner, so the limit cannot be overshot.
    const grant = await tx.$queryRaw<{ id: string }[]>(lockActiveGrant(owner));
    if (grant.length === 0) throw forbidden("This Application's grant on the store is revoked.");
    const count = await tx.webhookEndpoint.count({ where: owner });
    if (count >= MAX_ENDPOINTS_PER_OWNER) {
      throw unprocessable(`An application may register at most ${MAX_ENDPOINTS_PER_OWNER} webhook endpoints per store; delete one first.`, [
        { field: "url", code: "ENDPOINT_LIMIT_REACHED", message: `at most ${MAX_ENDPOINTS_PER_OWNER} endpoints per application and store` },
      ]);
    }
    return tx.webhookEndpoint.create({
      data: {
        ...owner,
        ...destinationColumns(destination),
        ordering: input.ordering ?? null,
        events,
        rateLimit: input.rateLimit ?? services.config.WEBHOOK_ENDPOINT_RATE,
        apiVersion: input.apiVersion ? apiVersionOf(input.apiVersion, "apiVersion") : principal.apiVersion,
        secretCiphertext: services.box.encrypt(secret),
        secretPrefix: secretPrefix(secret),
      },
      select: { id: true, url: true, events: true, rateLimit: true, secretPrefix: true, apiVersion: true, type: true, ordering: true, destination: true },
    });
  });
  return { ...endpoint, secret };
}

/**
 * Replaces the signing secret and returns the new one (shown once). The previous secret keeps signing
 * beside it for ROTATION_OVERLAP_MS, so receivers can switch without losing a delivery. One statement, so
 * two concurrent rotations cannot both demote the same secret.
 */
export async function rotateSecret(db: Tx, box: SecretBox, owner: Owner, id: string) {
  const secret = generateWebhookSecret();
  const prefix = secretPrefix(secret);
  const rows = await db.$queryRaw<{ id: string; previousSecretExpiresAt: Date }[]>(
    rotateEndpointSecret({ id, owner, secretCiphertext: box.encrypt(secret), secretPrefix: prefix, overlapMs: ROTATION_OVERLAP_MS }),
  );
  if (rows.length === 0) throw notFound("webhook endpoint", id);
  return { id: rows[0].id, secret, secretPrefix: prefix, previousSecretExpiresAt: rows[0].previousSecretExpiresAt };
}

/** Deletes the endpoint with its deliveries and attempts; their queued jobs find nothing and end. */
export async function deleteEndpoint(db: Tx, owner: Owner, id: string): Promise<void> {
  const { count } = await db.webhookEndpoint.deleteMany({ where: { id, ...ownerWhere(owner) } });
  if (count === 0) throw notFound("webhook endpoint", id);
}

/**
 * What an endpoint stores for the events asked for (a checked body): ["*"] as it is (whatever the scopes allow at
 * delivery time), or the known types, each needing its scope (403 otherwise).
 */
function subscription(asked: readonly string[], holds: (scope: Scope) => boolean): string[] {
  if (asked.includes(ALL_EVENTS)) {
    if (asked.some((e) => e !== ALL_EVENTS)) {
      throw invalidRequest('"*" subscribes to every event type: send it alone.', [
        { field: "events", code: "INVALID_VALUE", message: '`events` must hold "*" alone' },
      ]);
    }
    return [ALL_EVENTS];
  }
  // Known types by then; a repeated one would only be delivered once anyway.
  const events = [...new Set(asked.filter(isEventType))];
  const missing = events.map((e) => EVENT_SCOPES[e]).find((scope) => !holds(scope));
  if (missing) throw insufficientScope(missing);
  return events;
}

export interface EndpointChanges extends DestinationInput {
  /** "store" to order deliveries, null to stop ordering them, undefined to leave it. */
  ordering?: string | null;
  events?: readonly string[] | null;
  status?: Exclude<WebhookEndpointStatus, "FAILED"> | null;
  rateLimit?: number | null;
  /** A fault drill to run (SANDBOX endpoints only), null to end one, undefined to leave it as it is. */
  drill?: Drill | null;
  /** The API version its next deliveries are rendered in. */
  apiVersion?: string | null;
}

/** A drill whose every field is 0 (each defaults to 0) would change nothing: the request is a mistake. */
export function idleDrill() {
  return invalidRequest(`A fault drill needs at least one of ${DRILL_FIELDS.join(", ")} above 0; to end a drill, send drill: null.`, [
    { field: "drill", code: "INVALID_VALUE", message: `\`drill\` must set at least one of ${DRILL_FIELDS.join(", ")} above 0` },
  ]);
}

/** Drills rehearse faults against a receiver under development; a live store's receiver never gets them. */
function productionDrill(id: string) {
  return unprocessable(`Webhook endpoint ${id} belongs to a PRODUCTION store; fault drills run on SANDBOX endpoints only.`, [
    { field: "drill", code: "SANDBOX_ONLY", message: "fault drills run on SANDBOX endpoints only" },
  ]);
}

/** Said of an endpoint set INACTIVE through PATCH (the service sets its own reasons when it stops one). */
const DISABLED_ON_REQUEST = "Set INACTIVE on request.";

/** Said of an endpoint an administrator set INACTIVE. */
const DISABLED_BY_ADMIN = "Set INACTIVE by an administrator.";

function keptInactiveByAdmin(id: string) {
  return forbidden(
    `Webhook endpoint ${id} was set INACTIVE by an administrator and stays INACTIVE until an administrator sets it ACTIVE; contact support. ` +
      "Its url and events can still be changed.",
  );
}

/**
 * Changes an endpoint's URL, subscription or status, keeping its secret, history and deliveries (the caller has checked
 * the input). A partner's scopes are its token's; an administrator acts with the Application's. ACTIVE resumes an
 * INACTIVE endpoint with a fresh health record (a FAILED one stays FAILED until a success), unless an administrator
 * set it INACTIVE and a partner asks (403); INACTIVE stops it, and its pending retries end at their next due time.
 * The URL check resolves the host before `transact` starts; answers what `readBack` reads in the transaction.
 */
export async function updateEndpoint<T>(
  services: Services,
  principal: PartnerPrincipal | null,
  owner: Owner,
  id: string,
  changes: EndpointChanges,
  transact: Transact,
  readBack: (tx: Tx) => Promise<T>,
  waitOutside: WaitOutside,
): Promise<T> {
  const endpoint = await services.db.webhookEndpoint.findFirst({
    where: { id, ...ownerWhere(owner) },
    select: {
      id: true,
      applicationId: true,
      status: true,
      disabledByAdmin: true,
      type: true,
      destinationCiphertext: true,
      store: { select: { environment: true } },
      application: { select: { scopes: true } },
    },
  });
  if (!endpoint) throw notFound("webhook endpoint", id);
  if (changes.drill && endpoint.store.environment !== "SANDBOX") throw productionDrill(id);
  const reactivating = changes.status === "ACTIVE" && endpoint.status === "INACTIVE";
  if (principal && reactivating && endpoint.disabledByAdmin) throw keptInactiveByAdmin(id);
  const scopes = new Set<string>(principal ? principal.scopes : endpoint.application.scopes);
  const events = changes.events ? subscription(changes.events, (scope) => scopes.has(scope)) : undefined;
  const caller = { applicationId: endpoint.applicationId, waitOutside };
  // A new type starts afresh (all its fields needed); fields alone change the current type's settings one by one.
  const retyped = changes.type != null && changes.type !== endpoint.type;
  const type = changes.type ?? endpoint.type;
  const base = retyped ? {} : storedSettings(services.box, endpoint.destinationCiphertext);
  const destination =
    retyped || givesDestinationFields(changes) ? await destinationFrom(services, endpoint.store.environment, { ...changes, type }, base, caller) : null;
  const stoppedNow = endpoint.status !== "INACTIVE";
  const status =
    changes.status === "INACTIVE"
      ? principal
        ? { status: "INACTIVE" as const, disabledReason: stoppedNow ? DISABLED_ON_REQUEST : undefined }
        : { status: "INACTIVE" as const, disabledReason: DISABLED_BY_ADMIN, disabledByAdmin: true }
      : reactivating
        ? { status: "ACTIVE" as const, disabledReason: null, disabledByAdmin: false, failingSince: null, failureCount: 0 }
        : {};
  return transact(async (tx) => {
    const { count } = await tx.webhookEndpoint.updateMany({
      // A partner's ACTIVE holds only while no administrator has set the endpoint INACTIVE meanwhile.
      where: { id, ...ownerWhere(owner), ...(principal && reactivating ? { disabledByAdmin: false } : {}) },
      data: {
        ...(destination ? destinationColumns(destination) : {}),
        ...(changes.ordering !== undefined ? { ordering: changes.ordering } : {}),
        ...(events ? { events } : {}),
        ...(changes.rateLimit ? { rateLimit: changes.rateLimit } : {}),
        ...(changes.drill !== undefined ? { drill: changes.drill ? { ...changes.drill } : Prisma.DbNull } : {}),
        ...(changes.apiVersion ? { apiVersion: apiVersionOf(changes.apiVersion, "apiVersion") } : {}),
        ...status,
      },
    });
    if (count === 0) {
      const still = await tx.webhookEndpoint.findFirst({ where: { id, ...ownerWhere(owner) }, select: { id: true } });
      throw still ? keptInactiveByAdmin(id) : notFound("webhook endpoint", id);
    }
    return readBack(tx);
  });
}

/**
 * Administrators enable (ACTIVE, with a fresh health record) or disable (INACTIVE) an endpoint; FAILED is only ever set
 * by deliveries.
 */
export async function setEndpointStatus(db: Tx, id: string, status: Exclude<WebhookEndpointStatus, "FAILED">): Promise<void> {
  const data =
    status === "ACTIVE"
      ? { status, disabledReason: null, disabledByAdmin: false, failingSince: null }
      : { status, disabledReason: DISABLED_BY_ADMIN, disabledByAdmin: true };
  const { count } = await db.webhookEndpoint.updateMany({ where: { id }, data });
  if (count === 0) throw notFound("webhook endpoint", id);
}
