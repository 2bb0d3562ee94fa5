import { FIRST_API_VERSION, isApiVersion } from "../../platform/versions.js";
import type { GraphQLResolveInfo } from "graphql";
import { queryFromInfo } from "@pothos/plugin-prisma";
import type DataLoader from "dataloader";
import { batchStatements } from "../../platform/db/batch.js";
import { builder } from "../../platform/schema/builder.js";
import { storeIdOf, tenantOf, type Context } from "../../platform/schema/context.js";
import { runCommand } from "../../platform/schema/commands.js";
import { paginate, type Page } from "../../platform/schema/pagination.js";
import type { Prisma, WebhookDelivery as WebhookDeliveryRow, WebhookEndpointStatus } from "../../platform/db/prisma.js";
import { forbidden, notFound } from "../../platform/errors.js";
import { idArgs, PAGE_ARGS, uuid } from "../../platform/schemas.js";
import { jsonArgs } from "../../platform/validate.js";
import {
  adminFilterInput,
  BackfillWebhookEndpointBody,
  CreateWebhookEndpointBody,
  DELIVERY_LIST_ARGS,
  MAX_ENDPOINT_RATE,
  RecoverWebhookDeliveriesBody,
  UpdateWebhookEndpointBody,
} from "./schemas.js";
import { pageType, PaginationRef, UUID_TEXT } from "../../platform/schema/fields.js";
import { createEndpoint, deleteEndpoint, idleDrill, ownerWhere, rotateSecret, setEndpointStatus, updateEndpoint, type Owner } from "./endpoints.js";
import { requestRecovery, type RecoverResult } from "./recover.js";
import { requestBackfill, type BackfillResult } from "./backfill.js";
import { envelopeBody } from "./message.js";
import { WEBHOOK_EVENT_SCHEMA } from "../../platform/events/declaration.js";
import { findDelivery, listDeliveries, requestReplays, sendTestEvent } from "./deliveries.js";
import { ATTEMPT_DRILLS, drillFrom, isIdle, MAX_DRILL_SECONDS, storedDrill, type Drill } from "./drill.js";
import { DESTINATION_TYPES } from "./destinations/types.js";
import { WEBHOOK_ATTEMPT_TRIGGERS, WEBHOOK_DELIVERY_STATUSES, WEBHOOK_ENDPOINT_STATUSES, WEBHOOK_ENDPOINT_SWITCHES } from "./statuses.js";

/**
 * Webhook endpoints and deliveries. The same fields serve both audiences:
 * a partner token with `webhooks:manage` sees its own (Application, Store), an administrator every tenant.
 */

/** Partners with webhooks:manage use every field on their own rows; administrators by role. */
const WEBHOOK_READ = { adminRole: "VIEWER", scope: "webhooks:manage" } as const;
const WEBHOOK_SUPPORT = { adminRole: "SUPPORT", scope: "webhooks:manage" } as const;
const WEBHOOK_ADMIN = { adminRole: "ADMIN", scope: "webhooks:manage" } as const;

const DESTINATION_TYPE_TEXT =
  "Extension to the contract: where deliveries go: http (a POST to url), rabbitmq, nats (JetStream), mqtt, gcp_pubsub or aws_sqs (a publish to the broker, confirmed by it).";
const DESTINATION_SCHEMA = { jsonSchema: { type: "object", additionalProperties: true } };
const ORDERING_TEXT =
  "Extension to the contract: store when the store's events reach the endpoint one at a time in sequence order (each after the one before was delivered or dead-lettered); null when in any order.";
const DESTINATION_TEXT =
  "Extension to the contract: a broker endpoint's settings (url or servers, exchange, routingKey, subject, topic, projectId, apiEndpoint, queueUrl, region, endpoint, credentials), credentials masked; null for http.";

/** Svix's `secure_find`: every webhook query here is filtered by what this returns. */
function ownerOf(ctx: Context): Owner {
  if (ctx.principal.kind === "admin") return null;
  const tenant = tenantOf(ctx);
  return { applicationId: tenant.applicationId, storeId: tenant.storeId };
}

type ListScope = { storeId?: string; applicationId?: string };

/** A list's scope: the partner's own rows, or for administrators everything, optionally narrowed. */
function listScope(ctx: Context, args: { storeId?: string | null; applicationId?: string | null }): ListScope {
  const owner = ownerOf(ctx);
  if (owner) {
    if (args.storeId || args.applicationId) throw forbidden("storeId and applicationId are administrator filters; a partner token always reads its own store.");
    return owner;
  }
  adminFilterInput.check(jsonArgs({ storeId: args.storeId, applicationId: args.applicationId }));
  return { ...(args.storeId ? { storeId: args.storeId } : {}), ...(args.applicationId ? { applicationId: args.applicationId } : {}) };
}

/** A list's scope under a Store: a partner's own rows (in its own store), or for administrators that store's. */
function storeScope(ctx: Context, store: { id: string }, args: { applicationId?: string | null }): ListScope {
  const storeId = storeIdOf(ctx, store);
  return listScope(ctx, { storeId: ctx.principal.kind === "admin" ? storeId : null, applicationId: args.applicationId });
}

export const WebhookEndpointStatusEnum = builder.enumType("WebhookEndpointStatus", { values: WEBHOOK_ENDPOINT_STATUSES });
const WebhookEndpointSwitchEnum = builder.enumType("WebhookEndpointSwitch", {
  description: "What an administrator may set: FAILED is only ever set by deliveries.",
  values: WEBHOOK_ENDPOINT_SWITCHES,
});
export const WebhookDeliveryStatusEnum = builder.enumType("WebhookDeliveryStatus", { values: WEBHOOK_DELIVERY_STATUSES });
const WebhookAttemptTriggerEnum = builder.enumType("WebhookAttemptTrigger", { values: WEBHOOK_ATTEMPT_TRIGGERS });
const WebhookAttemptDrillEnum = builder.enumType("WebhookAttemptDrill", {
  description:
    "Extension to the contract: what the endpoint's fault drill did to an attempt: duplicate (a second send of the delivery), delayed or reordered (held before it was sent).",
  values: ATTEMPT_DRILLS,
});

const DRILL_SECONDS = { jsonSchema: { minimum: 0, maximum: MAX_DRILL_SECONDS } };

const WebhookDrill = builder.objectRef<Drill>("WebhookDrill").implement({
  description: "Extension to the contract: the fault drill a SANDBOX endpoint runs (PATCH drill; null ends it).",
  fields: (t) => ({
    duplicateRate: t.exposeFloat("duplicateRate", {
      description: "Share of deliveries sent twice (same eventId and webhook-id, each signed), 0 to 1.",
      extensions: { jsonSchema: { minimum: 0, maximum: 1 } },
    }),
    reorderWindowSeconds: t.exposeInt("reorderWindowSeconds", {
      description: "Each delivery is held a random time up to this many seconds, so later events overtake earlier ones.",
      extensions: DRILL_SECONDS,
    }),
    maxDelaySeconds: t.exposeInt("maxDelaySeconds", {
      description: "Each delivery is held a random time up to this many seconds more.",
      extensions: DRILL_SECONDS,
    }),
  }),
});

interface DeliveryStats {
  delivered: number;
  failed: number;
  pending: number;
}

const DAY_MS = 86_400_000;

const WebhookEndpointStats = builder.objectRef<DeliveryStats>("WebhookEndpointStats").implement({
  description: "Extension to the contract: the endpoint's deliveries created in the last 24 hours, by their status now.",
  fields: (t) => ({
    delivered: t.exposeInt("delivered", { description: "DELIVERED (at any attempt).", extensions: { jsonSchema: { minimum: 0 } } }),
    failed: t.exposeInt("failed", { description: "FAILED or DEAD_LETTER.", extensions: { jsonSchema: { minimum: 0 } } }),
    pending: t.exposeInt("pending", { description: "PENDING: the first attempt has not ended yet.", extensions: { jsonSchema: { minimum: 0 } } }),
    successRate: t.float({
      nullable: true,
      description: "delivered / (delivered + failed), from 0 to 1; null when none has ended.",
      extensions: { jsonSchema: { minimum: 0, maximum: 1 } },
      resolve: (s) => (s.delivered + s.failed === 0 ? null : s.delivered / (s.delivered + s.failed)),
    }),
  }),
});

/**
 * The last day's counts of every endpoint of one response, in one GROUP BY once the current resolvers have run (no
 * statement per listed endpoint); the (endpointId, status, createdAt) index answers it.
 */
function statsBatch(ctx: Context): DataLoader<string, DeliveryStats> {
  return batchStatements(
    async (endpointIds: readonly string[]) => {
      const rows = await ctx.db.webhookDelivery.groupBy({
        by: ["endpointId", "status"],
        where: { endpointId: { in: [...new Set(endpointIds)] }, createdAt: { gte: new Date(Date.now() - DAY_MS) } },
        _count: { _all: true },
      });
      const byEndpoint = new Map<string, DeliveryStats>();
      for (const r of rows) {
        const stats = byEndpoint.get(r.endpointId) ?? { delivered: 0, failed: 0, pending: 0 };
        if (r.status === "DELIVERED") stats.delivered += r._count._all;
        else if (r.status === "PENDING") stats.pending += r._count._all;
        else stats.failed += r._count._all;
        byEndpoint.set(r.endpointId, stats);
      }
      return endpointIds.map((id) => byEndpoint.get(id) ?? { delivered: 0, failed: 0, pending: 0 });
    },
    { schedule: setImmediate },
  );
}

const statsBatches = new WeakMap<Context, DataLoader<string, DeliveryStats>>();
function statsOf(ctx: Context, endpointId: string): Promise<DeliveryStats> {
  let batch = statsBatches.get(ctx);
  if (!batch) {
    batch = statsBatch(ctx);
    statsBatches.set(ctx, batch);
  }
  return batch.load(endpointId);
}

const WebhookEndpoint = builder.prismaObject("WebhookEndpoint", {
  fields: (t) => ({
    id: t.exposeID("id"),
    url: t.exposeString("url", { extensions: { jsonSchema: { format: "uri" } } }),
    events: t.exposeStringList("events"),
    status: t.expose("status", { type: WebhookEndpointStatusEnum }),
    secretPrefix: t.exposeString("secretPrefix", { description: "First 12 characters of the signing secret." }),
    lastSuccessAt: t.expose("lastSuccessAt", { type: "DateTime", nullable: true }),
    failureCount: t.exposeInt("failureCount", { description: "Consecutive failed attempts; 0 after a success.", extensions: { jsonSchema: { minimum: 0 } } }),
    rateLimit: t.exposeInt("rateLimit", {
      description:
        "Extension to the contract: deliveries per second the endpoint receives at most. Deliveries over it wait for their turn (they stay PENDING or FAILED with nextAttemptAt set); they never fail for it.",
      extensions: { jsonSchema: { minimum: 1, maximum: MAX_ENDPOINT_RATE } },
    }),
    apiVersion: t.exposeString("apiVersion", {
      description: "Extension to the contract: the API version its deliveries are rendered in (PATCH it to move them to another).",
    }),
    disabledReason: t.exposeString("disabledReason", {
      nullable: true,
      description:
        "Extension to the contract: why the endpoint is INACTIVE (its receiver answered 410 Gone, it failed for too long, or it was set INACTIVE); null otherwise.",
    }),
    previousSecretExpiresAt: t.expose("previousSecretExpiresAt", {
      type: "DateTime",
      nullable: true,
      description: "After a rotation, deliveries carry the previous secret's signature too until this time.",
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    type: t.exposeString("type", { description: DESTINATION_TYPE_TEXT, extensions: { jsonSchema: { enum: [...DESTINATION_TYPES] } } }),
    ordering: t.exposeString("ordering", { nullable: true, description: ORDERING_TEXT, extensions: { jsonSchema: { enum: ["store"] } } }),
    destination: t.field({
      type: "JSON",
      nullable: true,
      description: DESTINATION_TEXT,
      extensions: DESTINATION_SCHEMA,
      select: { destination: true },
      resolve: (e) => e.destination,
    }),
    drill: t.field({
      type: WebhookDrill,
      nullable: true,
      description: "Extension to the contract: the fault drill the endpoint runs (SANDBOX only); null when none.",
      select: { drill: true },
      resolve: (e) => storedDrill(e.drill),
    }),
    deliveriesLast24h: t.field({
      type: WebhookEndpointStats,
      description:
        "Extension to the contract: its deliveries created in the last 24 hours by status, and their success rate (what the partner portal shows per endpoint).",
      select: { id: true },
      resolve: (e, _args, ctx) => statsOf(ctx, e.id),
    }),
    store: t.relation("store", { authScopes: { adminRole: "VIEWER" } }),
    application: t.relation("application", { authScopes: { adminRole: "VIEWER" } }),
  }),
});

builder.prismaObject("WebhookAttempt", {
  fields: (t) => ({
    id: t.exposeID("id"),
    number: t.exposeInt("number", { description: "1-based position among all attempts of the delivery." }),
    trigger: t.expose("trigger", { type: WebhookAttemptTriggerEnum }),
    succeeded: t.exposeBoolean("succeeded"),
    httpStatus: t.exposeInt("httpStatus", { nullable: true }),
    durationMs: t.exposeInt("durationMs"),
    error: t.exposeString("error", { nullable: true }),
    requestHeaders: t.field({ type: "JSON", resolve: (a) => a.requestHeaders }),
    requestBody: t.exposeString("requestBody"),
    responseExcerpt: t.exposeString("responseExcerpt", { nullable: true, description: "Up to 4 KiB of the receiver's response body." }),
    startedAt: t.expose("startedAt", { type: "DateTime" }),
    drill: t.expose("drill", {
      type: WebhookAttemptDrillEnum,
      nullable: true,
      description: "Extension to the contract: what the endpoint's fault drill did to this attempt; null for an attempt no drill touched.",
    }),
  }),
});

const WebhookDelivery = builder.prismaObject("WebhookDelivery", {
  fields: (t) => ({
    id: t.exposeID("id"),
    eventId: t.exposeString("eventId", { description: "Same on every attempt and replay: deduplicate on it." }),
    eventType: t.exposeString("eventType"),
    tenantId: t.string({ description: "Store code.", select: { store: { select: { code: true } } }, resolve: (d) => d.store.code }),
    status: t.expose("status", { type: WebhookDeliveryStatusEnum }),
    httpStatus: t.exposeInt("httpStatus", { nullable: true }),
    attempts: t.exposeInt("attempts", { extensions: { jsonSchema: { minimum: 0 } } }),
    lastAttemptAt: t.expose("lastAttemptAt", { type: "DateTime", nullable: true }),
    nextAttemptAt: t.expose("nextAttemptAt", { type: "DateTime", nullable: true }),
    lastError: t.exposeString("lastError", { nullable: true }),
    requestDurationMs: t.exposeInt("requestDurationMs", { nullable: true }),
    endpointId: t.exposeString("endpointId", { description: "The endpoint the delivery is for.", extensions: UUID_TEXT }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    payload: t.field({
      type: "JSON",
      nullable: true,
      description: "Extension to the contract: the envelope sent (the same on every attempt), as a JSON object; null once the event is past its retention.",
      extensions: { jsonSchema: WEBHOOK_EVENT_SCHEMA },
      select: { eventId: true, store: { select: { code: true } }, endpoint: { select: { apiVersion: true } } },
      resolve: async (d, _args, ctx) => {
        const event = await ctx.db.event.findUnique({
          where: { id: d.eventId },
          select: { id: true, type: true, createdAt: true, data: true, sequence: true },
        });
        // In the endpoint's version: what its attempts send.
        const version = isApiVersion(d.endpoint.apiVersion) ? d.endpoint.apiVersion : FIRST_API_VERSION;
        return event ? JSON.parse(envelopeBody({ ...event, sequence: Number(event.sequence) }, d.store.code, version)) : null;
      },
    }),
    endpoint: t.relation("endpoint"),
    attemptLog: t.relation("attemptLog", {
      description: "Every attempt with its request and the receiver's response excerpt, oldest first.",
      query: { orderBy: [{ number: "asc" }] },
    }),
  }),
});

const WebhookDeliveryPage = builder.objectRef<Page<WebhookDeliveryRow>>("WebhookDeliveryPage").implement({
  fields: (t) => ({
    data: t.field({ type: [WebhookDelivery], resolve: (p) => p.data }),
    pagination: t.field({ type: PaginationRef, resolve: (p) => p.pagination }),
    hasMore: t.boolean({ resolve: (p) => p.pagination.hasMore }),
    nextCursor: t.string({
      nullable: true,
      description: "Pass as `cursor` for the next page; null on the last page.",
      resolve: (p) => p.pagination.nextCursor,
    }),
  }),
});

const CreatedWebhookEndpoint = builder
  .objectRef<{
    id: string;
    url: string;
    events: string[];
    rateLimit: number;
    apiVersion: string;
    secret: string;
    secretPrefix: string;
    type: string;
    ordering: string | null;
    destination: Prisma.JsonValue;
  }>("CreatedWebhookEndpoint")
  .implement({
    fields: (t) => ({
      id: t.exposeID("id"),
      url: t.exposeString("url"),
      type: t.exposeString("type", { description: DESTINATION_TYPE_TEXT, extensions: { jsonSchema: { enum: [...DESTINATION_TYPES] } } }),
      ordering: t.exposeString("ordering", { nullable: true, description: ORDERING_TEXT, extensions: { jsonSchema: { enum: ["store"] } } }),
      destination: t.field({ type: "JSON", nullable: true, description: DESTINATION_TEXT, extensions: DESTINATION_SCHEMA, resolve: (e) => e.destination }),
      events: t.exposeStringList("events"),
      rateLimit: t.exposeInt("rateLimit", {
        description: "Extension to the contract: deliveries per second the endpoint receives at most.",
        extensions: { jsonSchema: { minimum: 1, maximum: MAX_ENDPOINT_RATE } },
      }),
      apiVersion: t.exposeString("apiVersion", { description: "Extension to the contract: the API version its deliveries are rendered in." }),
      secret: t.exposeString("secret", { description: "The whsec_… signing secret. Shown only in this response." }),
      secretPrefix: t.exposeString("secretPrefix"),
      message: t.string({
        resolve: () => "Store the secret now: it is shown only once. Verify the X-Service-Signature header of every delivery with it.",
      }),
    }),
  });

const RotatedWebhookSecret = builder
  .objectRef<{ id: string; secret: string; secretPrefix: string; previousSecretExpiresAt: Date }>("RotatedWebhookSecret")
  .implement({
    fields: (t) => ({
      id: t.exposeID("id"),
      secret: t.exposeString("secret", { description: "The new signing secret. Shown only in this response." }),
      secretPrefix: t.exposeString("secretPrefix"),
      previousSecretExpiresAt: t.expose("previousSecretExpiresAt", {
        type: "DateTime",
        description: "Until then deliveries carry a v1 signature for the new and the previous secret.",
      }),
      message: t.string({
        resolve: (r) =>
          `Store the new secret now: it is shown only once. Until ${r.previousSecretExpiresAt.toISOString()} deliveries carry a v1 signature for the new and for the previous secret.`,
      }),
    }),
  });

const WebhookBackfill = builder.objectRef<BackfillResult>("WebhookBackfill").implement({
  description: "Extension to the contract: what one backfill call queued.",
  fields: (t) => ({
    count: t.exposeInt("count", {
      description: "Subscribed events this call queued for one BACKFILL attempt each (at most WEBHOOK_RECOVER_MAX, 100 by default).",
      extensions: { jsonSchema: { minimum: 0 } },
    }),
    hasMore: t.exposeBoolean("hasMore", { description: "More subscribed events follow: call again with afterSequence = nextAfterSequence." }),
    nextAfterSequence: t.field({
      type: "SafeInt",
      resolve: (r) => r.nextAfterSequence,
      description: "The sequence of the last event this call queued (the afterSequence given when it queued none): the next call's afterSequence.",
    }),
  }),
});

const RecoveredWebhookDeliveries = builder.objectRef<RecoverResult>("RecoveredWebhookDeliveries").implement({
  fields: (t) => ({
    count: t.exposeInt("count", {
      description:
        "FAILED and DEAD_LETTER deliveries of the window this call queued for one RECOVER attempt each (at most WEBHOOK_RECOVER_MAX, 100 by default).",
      extensions: { jsonSchema: { minimum: 0 } },
    }),
    hasMore: t.exposeBoolean("hasMore", {
      description:
        "Extension to the contract: the window holds more FAILED or DEAD_LETTER deliveries after this call's; call again with the same window to send them (each call continues where the last one stopped).",
    }),
    expired: t.exposeInt("expired", {
      description: "Extension to the contract: deliveries this call passed over because their event is past retention; they can never be sent again.",
      extensions: { jsonSchema: { minimum: 0 } },
    }),
  }),
});

const WebhookDrillInput = builder.inputType("WebhookDrillInput", {
  description: "Extension to the contract: a fault drill; each field 0 when left out, at least one above 0.",
  fields: (t) => ({
    duplicateRate: t.float({ description: "Share of deliveries sent twice, 0 to 1" }),
    reorderWindowSeconds: t.int({ description: "Seconds within which deliveries are released out of order, 0 to 300" }),
    maxDelaySeconds: t.int({ description: "Seconds a delivery may be held back at most, 0 to 300" }),
  }),
});

const WebhookDestinationCredentialsInput = builder.inputType("WebhookDestinationCredentialsInput", {
  description: "Extension to the contract: aws_sqs { accessKeyId, secretAccessKey }; gcp_pubsub a service account's { clientEmail, privateKey }.",
  fields: (t) => ({ accessKeyId: t.string(), secretAccessKey: t.string(), clientEmail: t.string(), privateKey: t.string() }),
});

/** The destination fields both endpoint inputs take (extension to the contract). */
type InputFields = PothosSchemaTypes.InputFieldBuilder<typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never, "InputObject">;
const destinationInputFields = (t: InputFields) => ({
  type: t.string({ description: "http (default), rabbitmq, nats, mqtt, gcp_pubsub or aws_sqs" }),
  ordering: t.string({ description: "store: the store's events one at a time in sequence order; null: any order" }),
  exchange: t.string({ description: "rabbitmq: the exchange" }),
  routingKey: t.string({ description: "rabbitmq: the routing key ({storeCode}, {eventType})" }),
  servers: t.stringList({ description: "nats: the servers' URLs" }),
  subject: t.string({ description: "nats: the subject ({storeCode}, {eventType})" }),
  topic: t.string({ description: "mqtt, gcp_pubsub: the topic ({storeCode}, {eventType})" }),
  projectId: t.string({ description: "gcp_pubsub: the Google Cloud project" }),
  apiEndpoint: t.string({ description: "gcp_pubsub: host:port of an emulator" }),
  queueUrl: t.string({ description: "aws_sqs: the queue's URL" }),
  region: t.string({ description: "aws_sqs: the queue's region" }),
  endpoint: t.string({ description: "aws_sqs: another SQS-compatible service's URL" }),
  credentials: t.field({ type: WebhookDestinationCredentialsInput, description: "aws_sqs or gcp_pubsub credentials (stored encrypted, shown masked)" }),
});

const UpdateWebhookEndpointInput = builder.inputType("UpdateWebhookEndpointInput", {
  fields: (t) => ({
    ...destinationInputFields(t),
    url: t.string(),
    events: t.stringList({ description: 'Event types, or ["*"] for every type the Application\'s scopes allow' }),
    status: t.field({ type: WebhookEndpointSwitchEnum }),
    rateLimit: t.int({ description: "Deliveries per second the endpoint receives at most (1 to 10000)" }),
    drill: t.field({ type: WebhookDrillInput, description: "A fault drill (SANDBOX endpoints only); null ends it" }),
    apiVersion: t.string({ description: "The API version its next deliveries are rendered in" }),
  }),
});

const CreateWebhookEndpointInput = builder.inputType("CreateWebhookEndpointInput", {
  fields: (t) => ({
    ...destinationInputFields(t),
    url: t.string({ description: "Required for an http endpoint; a broker's URL for rabbitmq and mqtt" }),
    events: t.stringList({ required: true }),
    rateLimit: t.int({ description: "Deliveries per second the endpoint receives at most (1 to 10000; default WEBHOOK_ENDPOINT_RATE, 50)" }),
    apiVersion: t.string({ description: "The API version deliveries are rendered in; default the Application's" }),
  }),
});

/** What an endpoint read loads beside its columns (the selection GraphQL was asked for). */
type EndpointQuery = { include?: Prisma.WebhookEndpointInclude; select?: Prisma.WebhookEndpointSelect };

/** Endpoints within a list's scope, oldest first: Query.webhookEndpoints and Store.webhookEndpoints. */
function listEndpoints(ctx: Context, scope: ListScope, status: WebhookEndpointStatus | null | undefined, query: EndpointQuery) {
  return ctx.db.webhookEndpoint.findMany({
    ...query,
    where: { ...scope, ...(status ? { status } : {}) },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    take: 500,
  });
}

const ENDPOINT_ORDER = [
  { field: "createdAt", direction: "asc" },
  { field: "id", direction: "asc" },
] as const;

/** One page of endpoints within a list's scope, oldest first: Query.webhookEndpointPage. */
function pageEndpoints(
  ctx: Context,
  scope: ListScope,
  args: { status?: WebhookEndpointStatus | null; limit?: number | null; cursor?: string | null },
  info: GraphQLResolveInfo,
) {
  const where = { ...scope, ...(args.status ? { status: args.status } : {}) };
  const query = queryFromInfo({ context: ctx, info, path: ["data"] });
  return paginate({
    limit: args.limit,
    cursor: args.cursor,
    sort: [...ENDPOINT_ORDER],
    findCursor: (id) => ctx.db.webhookEndpoint.findFirst({ where: { id, ...scope }, select: { id: true, createdAt: true } }),
    findMany: ({ after, orderBy, take }) => ctx.db.webhookEndpoint.findMany({ ...query, where: after ? { AND: [where, after] } : where, orderBy, take }),
  });
}

const WebhookEndpointPage = pageType("WebhookEndpointPage", WebhookEndpoint);

const deliveryListArgs = builder.args((t) => ({
  status: t.field({ type: WebhookDeliveryStatusEnum }),
  endpointId: t.id(),
  eventType: t.string(),
  limit: t.int(),
  cursor: t.string(),
}));

builder.prismaObjectFields("Store", (t) => ({
  webhookEndpoints: t.prismaField({
    type: [WebhookEndpoint],
    authScopes: WEBHOOK_READ,
    description: "The store's endpoints, oldest first: a partner token's own, for administrators every Application's (applicationId narrows).",
    args: { applicationId: t.arg.id(), status: t.arg({ type: WebhookEndpointStatusEnum }) },
    resolve: (query, store, args, ctx) => listEndpoints(ctx, storeScope(ctx, store, args), args.status, query),
  }),
  webhookDeliveries: t.field({
    type: WebhookDeliveryPage,
    authScopes: WEBHOOK_READ,
    description: "The store's deliveries, newest first: a partner token's own, for administrators every Application's (applicationId narrows).",
    args: { ...deliveryListArgs, applicationId: t.arg.id() },
    input: { args: DELIVERY_LIST_ARGS },
    resolve: (store, args, ctx, info) =>
      listDeliveries(ctx.db, { ...args, scope: storeScope(ctx, store, args) }, args, queryFromInfo({ context: ctx, info, path: ["data"] })),
  }),
}));

builder.queryFields((t) => ({
  webhookEndpoints: t.prismaField({
    type: [WebhookEndpoint],
    authScopes: WEBHOOK_READ,
    description: "Endpoints, oldest first. Administrators see every tenant's and may filter by storeId and applicationId.",
    args: { storeId: t.arg.id(), applicationId: t.arg.id(), status: t.arg({ type: WebhookEndpointStatusEnum }) },
    resolve: (query, _root, args, ctx) => listEndpoints(ctx, listScope(ctx, args), args.status, query),
  }),
  webhookEndpointPage: t.field({
    type: WebhookEndpointPage,
    authScopes: WEBHOOK_READ,
    description: "Endpoints a page at a time, oldest first (the REST list): webhookEndpoints with limit and cursor.",
    args: {
      storeId: t.arg.id(),
      applicationId: t.arg.id(),
      status: t.arg({ type: WebhookEndpointStatusEnum }),
      limit: t.arg.int({ description: "1..100, default 20" }),
      cursor: t.arg.string({ description: "pagination.nextCursor of the previous page" }),
    },
    input: { args: PAGE_ARGS },
    resolve: (_root, args, ctx, info) => pageEndpoints(ctx, listScope(ctx, args), args, info),
  }),
  webhookEndpoint: t.prismaField({
    type: WebhookEndpoint,
    authScopes: WEBHOOK_READ,
    args: { id: t.arg.id({ required: true }) },
    input: idArgs,
    resolve: async (query, _root, { id }, ctx) => {
      const found = await ctx.db.webhookEndpoint.findFirst({ ...query, where: { id, ...ownerWhere(ownerOf(ctx)) } });
      if (!found) throw notFound("webhook endpoint", id);
      return found;
    },
  }),
  webhookDeliveries: t.field({
    type: WebhookDeliveryPage,
    authScopes: WEBHOOK_READ,
    description: "Deliveries, newest first. Administrators see every tenant's and may filter by storeId and applicationId.",
    args: { ...deliveryListArgs, storeId: t.arg.id(), applicationId: t.arg.id() },
    input: { args: DELIVERY_LIST_ARGS },
    resolve: (_root, args, ctx, info) =>
      listDeliveries(ctx.db, { ...args, scope: listScope(ctx, args) }, args, queryFromInfo({ context: ctx, info, path: ["data"] })),
  }),
  webhookDelivery: t.prismaField({
    type: WebhookDelivery,
    authScopes: WEBHOOK_READ,
    args: { id: t.arg.id({ required: true }) },
    input: idArgs,
    resolve: (query, _root, { id }, ctx) => {
      return findDelivery(ctx.db, ownerOf(ctx), id, query);
    },
  }),
}));

builder.mutationFields((t) => ({
  createWebhookEndpoint: t.field({
    type: CreatedWebhookEndpoint,
    authScopes: { scope: "webhooks:manage" },
    description: "Registers an endpoint for the token's store. The secret is in this response only.",
    args: { input: t.arg({ type: CreateWebhookEndpointInput, required: true }) },
    input: { object: { arg: "input", schema: CreateWebhookEndpointBody } },
    resolve: (_root, { input }, ctx) => {
      return createEndpoint(ctx.services, tenantOf(ctx), input, (fn) => runCommand(ctx, fn), ctx.waitOutside);
    },
  }),
  deleteWebhookEndpoint: t.boolean({
    authScopes: WEBHOOK_ADMIN,
    args: { id: t.arg.id({ required: true }) },
    input: idArgs,
    resolve: async (_root, { id }, ctx) => {
      await deleteEndpoint(ctx.db, ownerOf(ctx), id);
      return true;
    },
  }),
  rotateWebhookEndpointSecret: t.field({
    type: RotatedWebhookSecret,
    authScopes: WEBHOOK_ADMIN,
    description: "Issues a new signing secret; the previous one keeps signing beside it for 24 hours.",
    args: { id: t.arg.id({ required: true }) },
    input: idArgs,
    resolve: (_root, { id }, ctx) => {
      return rotateSecret(ctx.db, ctx.services.box, ownerOf(ctx), id);
    },
  }),
  testWebhookEndpoint: t.prismaField({
    type: WebhookDelivery,
    authScopes: WEBHOOK_ADMIN,
    description: "Sends a `webhook.test` event now and returns its delivery once the attempt has ended.",
    args: { id: t.arg.id({ required: true }) },
    // It waits for the receiver (up to WEBHOOK_TIMEOUT_MS): its writes commit on their own, before the call.
    extensions: { callsOut: true },
    input: idArgs,
    resolve: async (query, _root, { id }, ctx) => {
      if (ctx.transaction) throw new Error("testWebhookEndpoint calls out over the network; it must not run inside a caller's transaction.");
      const deliveryId = await sendTestEvent(ctx.services, ownerOf(ctx), id, ctx.waitOutside);
      return ctx.db.webhookDelivery.findUniqueOrThrow({ ...query, where: { id: deliveryId } });
    },
  }),
  replayWebhookDelivery: t.prismaField({
    type: WebhookDelivery,
    authScopes: WEBHOOK_SUPPORT,
    description: "Queues one more attempt now, in any status; the delivery is PENDING until it ends.",
    args: { id: t.arg.id({ required: true }) },
    input: idArgs,
    resolve: (query, _root, { id }, ctx) => {
      return runCommand(ctx, (tx) => requestReplays(tx, ownerOf(ctx), [id], () => tx.webhookDelivery.findUniqueOrThrow({ ...query, where: { id } })));
    },
  }),
  replayWebhookDeliveries: t.prismaField({
    type: [WebhookDelivery],
    authScopes: WEBHOOK_SUPPORT,
    description: "Replays up to 100 deliveries at once (all or none).",
    args: { ids: t.arg.idList({ required: true }) },
    resolve: (query, _root, { ids }, ctx) =>
      runCommand(ctx, (tx) =>
        requestReplays(tx, ownerOf(ctx), ids, (unique) =>
          tx.webhookDelivery.findMany({ ...query, where: { id: { in: unique } }, orderBy: [{ createdAt: "desc" }, { id: "desc" }] }),
        ),
      ),
  }),
  updateWebhookEndpoint: t.prismaField({
    type: WebhookEndpoint,
    authScopes: WEBHOOK_ADMIN,
    description: "Changes an endpoint's url, events or status (ACTIVE or INACTIVE); its secret, history and deliveries are kept.",
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateWebhookEndpointInput, required: true }) },
    input: { args: { id: uuid }, object: { arg: "input", schema: UpdateWebhookEndpointBody } },
    resolve: async (query, _root, { id, input }, ctx) => {
      const drill = input.drill ? drillFrom(input.drill) : input.drill;
      if (drill && isIdle(drill)) throw idleDrill();
      const principal = ctx.principal.kind === "partner" ? tenantOf(ctx) : null;
      return updateEndpoint(
        ctx.services,
        principal,
        ownerOf(ctx),
        id,
        { ...input, drill },
        (fn) => runCommand(ctx, fn),
        (tx) => tx.webhookEndpoint.findUniqueOrThrow({ ...query, where: { id } }),
        ctx.waitOutside,
      );
    },
  }),
  recoverWebhookDeliveries: t.field({
    type: RecoveredWebhookDeliveries,
    authScopes: WEBHOOK_SUPPORT,
    description:
      "Sends again, as RECOVER attempts, the FAILED and DEAD_LETTER deliveries of the endpoint created in [since, until) (until: now by default), " +
      "at most WEBHOOK_RECOVER_MAX per call: hasMore says whether to call again with the same window, which continues after this call's. " +
      "Deliveries whose event is past retention are passed over (expired); when nothing else is left, EVENT_EXPIRED.",
    args: { id: t.arg.id({ required: true }), since: t.arg({ type: "DateTime", required: true }), until: t.arg({ type: "DateTime" }) },
    input: { args: { id: uuid }, object: { schema: RecoverWebhookDeliveriesBody } },
    resolve: (_root, { id, since, until }, ctx) => {
      return runCommand(ctx, (tx) => requestRecovery(tx, ctx.services.config, ownerOf(ctx), id, { since, until }));
    },
  }),
  backfillWebhookEndpoint: t.field({
    type: WebhookBackfill,
    authScopes: WEBHOOK_SUPPORT,
    description:
      "Extension to the contract: sends the endpoint, as BACKFILL attempts, the store's events after afterSequence that it subscribes to, delivered " +
      "before or not (those within retention), in sequence order, at most WEBHOOK_RECOVER_MAX per call, at the endpoint's pace; hasMore says " +
      "whether to call again, with afterSequence = nextAfterSequence.",
    args: { id: t.arg.id({ required: true }), afterSequence: t.arg({ type: "SafeInt", required: true }) },
    input: { args: { id: uuid }, object: { schema: BackfillWebhookEndpointBody } },
    resolve: (_root, { id, afterSequence }, ctx) => {
      return runCommand(ctx, (tx) => requestBackfill(tx, ctx.services.config, ownerOf(ctx), id, afterSequence));
    },
  }),
  setWebhookEndpointStatus: t.prismaField({
    type: WebhookEndpoint,
    authScopes: { adminRole: "SUPPORT" },
    description: "Enables (ACTIVE) or disables (INACTIVE) an endpoint. INACTIVE endpoints receive nothing.",
    args: { id: t.arg.id({ required: true }), status: t.arg({ type: WebhookEndpointSwitchEnum, required: true }) },
    input: idArgs,
    resolve: async (query, _root, { id, status }, ctx) => {
      return runCommand(ctx, async (tx) => {
        await setEndpointStatus(tx, id, status);
        return tx.webhookEndpoint.findUniqueOrThrow({ ...query, where: { id } });
      });
    },
  }),
}));
