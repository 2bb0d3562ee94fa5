import { defineRoute } from "../../platform/route.js";
import { graphql } from "../../platform/schema/typed.js";
import { locationHeader, nonNull } from "../../platform/schemas.js";
import { OrderDetailFragment } from "../orders/routes.js";
import { StoreEventFragment } from "../events/routes.js";

const SeedResultFragment = graphql(`fragment SeedResult on SandboxSeedResult { storeId categories products customers }`);

/** Their fields let SANDBOX tokens in with no write scope, so partners test without write scopes (firing an event needs its read scope). */
export const sandboxRoutes = [
  defineRoute({
    operationId: "seedSandbox",
    method: "POST",
    path: "/public/v1/sandbox/seed",
    tag: "Sandbox",
    summary: "Fill the sandbox store with a fake catalog and customers",
    description:
      "Deterministic data: categories, products with variations and additionals, customers. Calling it again duplicates nothing. Answers the store's counts.",
    document: graphql("mutation seedSandbox { sandboxSeed { ...SeedResult } }", [SeedResultFragment]),
    respond: (data) => ({ body: data.sandboxSeed }),
    status: 201,
    response: { description: "What the store now holds" },
  }),
  defineRoute({
    operationId: "createSandboxOrder",
    method: "POST",
    path: "/public/v1/sandbox/orders",
    tag: "Sandbox",
    summary: "Generate an order in one of seven scenarios",
    description:
      "Runs the real order code path, so registered webhooks fire: order.created always, customer.created for a first-time customer, " +
      "order.cancelled for `cancelled`. A store with no catalog is seeded first. The order is PENDING except for `cancelled`. " +
      "`overrides` (extension to the contract) replaces the scenario's items, customer, notes, scheduledFor, delivery fee or " +
      "discount, checked as on POST /orders: an unknown product, or a discount above subtotal plus fee, is 422. " +
      "`simulate` (extension to the contract) then moves the order on its own, one status every `stepSeconds` (default 5), through the " +
      "same status change as PATCH /orders/{id}/status, with its events and webhooks, until `until`; a status the order does not " +
      "reach is 422 and creates nothing, and any change to the order by someone else ends the simulation.",
    document: graphql(
      `mutation createSandboxOrder($scenario: SandboxScenario!, $overrides: SandboxOrderOverrides, $simulate: SandboxSimulation) {
        sandboxCreateOrder(scenario: $scenario, overrides: $overrides, simulate: $simulate) { ...OrderDetail } }`,
      [OrderDetailFragment],
    ),
    respond: (data) => ({ body: data.sandboxCreateOrder, headers: { location: `/public/v1/orders/${data.sandboxCreateOrder.id}` } }),
    status: 201,
    response: { description: "The generated order", headers: locationHeader("/public/v1/orders/{id}") },
    errors: [422],
  }),
  defineRoute({
    operationId: "fireSandboxEvent",
    method: "POST",
    path: "/public/v1/sandbox/events",
    tag: "Sandbox",
    summary: "Fire an event of any type (extension to the contract)",
    description:
      "Makes the change that emits `type` through the real code path on the sandbox store, so registered webhooks and the feed " +
      "see it: store.updated changes the store's phone; customer.created creates a customer, customer.updated changes one; " +
      "order.* creates a DELIVERY order and moves it through the statuses needed, emitting the intermediate events too; " +
      "catalog.updated pauses or resumes a product. Firing a type needs its read scope, the one receiving it needs (customers:read " +
      "for customer.*, orders:read for order.*, catalog:read, merchant:read for store.updated): otherwise 403 INSUFFICIENT_SCOPE naming it, " +
      "and nothing changes. Answers 201 with the event, except catalog.updated, which is aggregated " +
      "over a window (CATALOG_EVENT_WINDOW_MS): 202 with the change `{ action, itemId, itemType }` that will produce it.",
    document: graphql(
      `mutation fireSandboxEvent($type: String!) {
        sandboxFireEvent(type: $type) { event { ...StoreEvent } catalogChange { action itemId itemType } } }`,
      [StoreEventFragment],
    ),
    respond: (data) => {
      const { event, catalogChange } = data.sandboxFireEvent;
      return event ? { status: 201, body: event } : { status: 202, body: catalogChange };
    },
    status: 201,
    // The selection's event is nullable (catalog.updated has none); a 201 always carries one, a 202 the change.
    response: {
      description: "The event fired, as the feed shows it",
      body: (at) => nonNull(at("sandboxFireEvent", "event")),
    },
    otherSuccess: {
      202: {
        description: "catalog.updated: the pending change that will produce it once its window closes",
        body: (at) => nonNull(at("sandboxFireEvent", "catalogChange")),
        component: "PendingCatalogChange",
      },
    },
  }),
];
