import { Repeater } from "graphql-yoga";
import { builder } from "../../platform/schema/builder.js";
import type { Context } from "../../platform/schema/context.js";
import { ApiError, invalidRequest } from "../../platform/errors.js";
import { EVENT_SCOPES, EVENT_TYPES } from "./types.js";
import { WEBHOOK_EVENT_SCHEMA } from "../../platform/events/declaration.js";
import { ENDPOINT_EVENT_TYPES } from "./operational.js";
import { checkCursor, type FeedEnvelope, type FeedPage, feedPage, followEvents, readEvent } from "./feed.js";
import { PaginationRef } from "../../platform/schema/fields.js";
import { DEFAULT_PAGE_SIZE } from "../../platform/schema/pagination.js";
import { idArgs } from "../../platform/schemas.js";
import { EVENT_LIST_ARGS, STORE_EVENTS_ARGS } from "./schemas.js";
import { tenantOf } from "../../platform/schema/context.js";
import { credentialEnds } from "../../platform/auth/credential.js";
import { onClose } from "../../platform/streams.js";

export const StoreEvent = builder.objectRef<FeedEnvelope>("StoreEvent").implement({
  description: "One event as webhooks deliver it (same eventId), with its place in the store's sequence.",
  fields: (t) => ({
    eventId: t.exposeID("eventId"),
    eventType: t.exposeString("eventType"),
    timestamp: t.exposeString("timestamp", { description: "When the event was recorded, ISO 8601 UTC" }),
    tenantId: t.exposeString("tenantId", { description: "The store's code" }),
    sequence: t.field({
      type: "SafeInt",
      description: "Per store, strictly increasing in commit order; pass the last one seen as `after` to resume",
      resolve: (e) => e.sequence,
    }),
    data: t.field({ type: "JSON", description: "The event's data, as in the webhook body", resolve: (e) => e.data }),
  }),
});

const EventPage = builder.objectRef<FeedPage>("EventPage").implement({
  description: "A page of the event feed. pagination.nextCursor is never null: pass it back as `after` to read on.",
  fields: (t) => ({
    // Over REST each item is the envelope of its type (WebhookEvent); a selection of it takes every field.
    data: t.field({ type: [StoreEvent], extensions: { jsonSchema: WEBHOOK_EVENT_SCHEMA }, resolve: (page) => page.data }),
    pagination: t.field({ type: PaginationRef, resolve: (page) => page.pagination }),
  }),
});

/** The store a subscriber follows: a partner's own (another store's id is NOT_FOUND), any store for administrators. */
async function storeToFollow(ctx: Context, storeId: string | null | undefined): Promise<string> {
  const { principal } = ctx;
  if (principal.kind === "partner") {
    if (storeId != null && storeId !== principal.storeId) throw new ApiError("NOT_FOUND", `No store ${storeId}.`);
    return principal.storeId;
  }
  if (storeId == null)
    throw invalidRequest("storeId is required for administrators.", [
      { field: "storeId", code: "REQUIRED", message: "`storeId` is required for administrators" },
    ]);
  const store = await ctx.db.store.findUnique({ where: { id: storeId }, select: { id: true } });
  if (!store) throw new ApiError("NOT_FOUND", `No store ${storeId}.`);
  return store.id;
}

/**
 * The event types a reader gets: those asked for (default all), less those the partner's scopes do not cover. The
 * operational webhook events are about one Application's endpoints, not the store: partners never read them here.
 * An export's events they do: the feed is where a partner that loaded an export continues.
 */
function typesToFollow(ctx: Context, asked: readonly string[] | null | undefined): string[] {
  const { principal } = ctx;
  return EVENT_TYPES.filter(
    (t) => (asked ? asked.includes(t) : true) && (principal.kind !== "partner" || (principal.scopes.has(EVENT_SCOPES[t]) && !ENDPOINT_EVENT_TYPES.includes(t))),
  );
}

/** What a live stream yields: an event, or the reason its credential ended (the stream's last item). */
type StreamItem = { event: FeedEnvelope } | { ended: ApiError };

builder.subscriptionField("storeEvents", (t) =>
  t.field({
    type: StoreEvent,
    description:
      "The store's events as they commit, in sequence order (over Server-Sent Events: POST /graphql with Accept: text/event-stream). " +
      "Pass the last sequence seen as `after` to resume without a gap; without it, events from now on. Partners follow their own " +
      "store and get only the types their scopes allow; administrators name the store.",
    authScopes: { adminRole: "VIEWER", partner: true },
    args: {
      storeId: t.arg.id({ description: "Required for administrators; a partner's own store by default" }),
      types: t.arg.stringList({ description: "Only these event types (default: all the credential may read)" }),
      after: t.arg.string({ description: "The sequence of the last event seen" }),
    },
    input: { args: STORE_EVENTS_ARGS },
    subscribe: async (_root, args, ctx) => {
      const storeId = await storeToFollow(ctx, args.storeId == null ? null : String(args.storeId));
      const types = typesToFollow(ctx, args.types);
      const after = args.after == null ? null : BigInt(args.after);
      const { services } = ctx;
      const { db, storeEvents } = services;
      if (after !== null) await checkCursor(db, storeId, after);
      const release = services.streams.admit(ctx.principal);
      // A Repeater, not the generator itself: its stop fires when the client goes away, even while the
      // generator waits for the next event, and aborting that wait ends the generator. The stream also ends when
      // its credential does, with one last item carrying the reason.
      const stream = new Repeater<StreamItem>(async (push, stop) => {
        const controller = new AbortController();
        void stop.then(() => controller.abort());
        void credentialEnds(services, ctx.principal, services.config.GRAPHQL_STREAM_CHECK_MS, controller.signal).then(async (ended) => {
          if (!ended) return;
          // Reading stops first: an event read meanwhile must not follow the last item.
          controller.abort();
          await push({ ended });
          stop();
        });
        for await (const event of followEvents(db, storeEvents, storeId, { after, types, signal: controller.signal })) {
          if (controller.signal.aborted) break;
          await push({ event });
        }
        stop();
      });
      return onClose(stream, release);
    },
    resolve: (item) => {
      if ("ended" in item) throw item.ended;
      return item.event;
    },
  }),
);

builder.queryFields((t) => ({
  events: t.field({
    type: EventPage,
    description:
      "The store's events, oldest first, as webhooks deliver them (same eventIds), each with its sequence. Types the token's " +
      "scopes do not cover are left out. Kept EVENT_RETENTION_DAYS days.",
    authScopes: { partner: true },
    args: {
      after: t.arg.string({ description: "pagination.nextCursor of the previous page (a sequence); from the first kept event without it" }),
      types: t.arg.stringList({ description: "Only these event types" }),
      limit: t.arg.int({ description: "Page size, 1 to 100 (default 20)" }),
    },
    input: { args: EVENT_LIST_ARGS },
    resolve: async (_root, args, ctx) => {
      const { storeId } = tenantOf(ctx);
      return feedPage(ctx.db, storeId, { after: BigInt(args.after ?? 0), types: typesToFollow(ctx, args.types), limit: args.limit ?? DEFAULT_PAGE_SIZE });
    },
  }),
  event: t.field({
    type: StoreEvent,
    description: "One event of the store, by eventId.",
    authScopes: { partner: true },
    args: { id: t.arg.id({ required: true }) },
    input: idArgs,
    resolve: async (_root, args, ctx) => {
      const { storeId } = tenantOf(ctx);
      const id = String(args.id);
      const event = await readEvent(ctx.db, storeId, id, typesToFollow(ctx, null));
      if (!event) throw new ApiError("NOT_FOUND", `No event ${id}.`);
      return event;
    },
  }),
}));
