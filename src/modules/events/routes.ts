import { defineRoute } from "../../platform/route.js";
import { graphql } from "../../platform/schema/typed.js";
import { PaginationFragment } from "../../platform/schema/fields.js";

const SEQUENCE_TEXT = { type: "string", pattern: "^\\d+$", description: "The sequence of the last event read, or `after` when the page is empty" };

export const StoreEventFragment = graphql(`fragment StoreEvent on StoreEvent { eventId eventType timestamp tenantId sequence data }`);

/**
 * The event feed: the envelopes webhooks carry, read back in the store's sequence order. No scope of its own (its
 * fields let any partner token in): each event type needs its read scope, and the operation leaves out the types
 * the token lacks.
 */
export const eventRoutes = [
  defineRoute({
    operationId: "listEvents",
    method: "GET",
    path: "/public/v1/events",
    tag: "Events",
    summary: "Read the event feed (extension to the contract)",
    description:
      "The store's events, oldest first, as webhooks deliver them (same eventId), each with its `sequence`: per store, strictly " +
      "increasing in commit order. Pass `pagination.nextCursor` back as `after` to read on; it is never null (on the last page it " +
      "is the last sequence read, so polling with it returns only newer events). An `after` above the store's latest sequence " +
      "(another store's, say) is 400 INVALID_REQUEST on `after`, so a reader never waits on a cursor the store has not reached. Each event type needs its read scope " +
      "(orders:read for order.*, …); types the token lacks are left out. Events are kept EVENT_RETENTION_DAYS days.",
    document: graphql(
      `query listEvents($after: String, $types: [String!], $limit: Int) {
        events(after: $after, types: $types, limit: $limit) {
          data { ...StoreEvent }
          pagination { ...Pagination }
        }
      }`,
      [StoreEventFragment, PaginationFragment],
    ),
    bind: { lists: ["types"] },
    respond: (data) => ({ body: data.events }),
    status: 200,
    response: {
      description: "A page of events",
      component: "EventPage",
      // The shared Pagination allows a null nextCursor (the other lists end with one); the feed's never is.
      body: (at) => ({
        type: "object",
        required: ["data", "pagination"],
        properties: {
          data: at("events", "data"),
          pagination: {
            allOf: [at("events", "pagination")],
            type: "object",
            required: ["nextCursor"],
            properties: { nextCursor: SEQUENCE_TEXT },
          },
        },
      }),
    },
  }),
  defineRoute({
    operationId: "getEventById",
    method: "GET",
    path: "/public/v1/events/{eventId}",
    tag: "Events",
    summary: "Get one event (extension to the contract)",
    description: "The envelope as webhooks deliver it, with its sequence. Another store's event, or one of a type the token's scopes do not cover, is 404.",
    document: graphql(`query getEventById($id: ID!) { event(id: $id) { ...StoreEvent } }`, [StoreEventFragment]),
    bind: { rename: { eventId: "id" } },
    respond: (data) => ({ body: data.event }),
    status: 200,
    response: { description: "The event" },
    errors: [404],
  }),
];
