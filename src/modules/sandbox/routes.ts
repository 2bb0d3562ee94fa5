import { defineRoute } from "../../platform/route.js";
import { OrderDetailSchema } from "../orders/schemas.js";
import { locationHeader } from "../../platform/schemas.js";
import { sandboxOrderInput, SeedResultSchema } from "./schemas.js";
import { ORDER_DETAIL_FIELDS } from "../orders/routes.js";
import type { SeedResult } from "./seed.js";

type OrderBody = Record<string, unknown> & { id: string };

/** SANDBOX tokens only, no scope needed, so partners test without write scopes. */
export const sandboxRoutes = [
  defineRoute<{ sandboxSeed: SeedResult }>({
    operationId: "seedSandbox",
    method: "POST",
    path: "/public/v1/sandbox/seed",
    tag: "Sandbox",
    summary: "Fill the sandbox store with a fake catalog and customers",
    description:
      "Deterministic data: categories, products with variations and additionals, customers. Calling it again duplicates nothing. Answers the store's counts.",
    scope: null,
    sandboxOnly: true,
    document: "mutation seedSandbox { sandboxSeed { storeId categories products customers } }",
    variables: () => ({}),
    respond: (data) => ({ body: data.sandboxSeed }),
    status: 201,
    response: { description: "What the store now holds", schema: SeedResultSchema },
  }),
  defineRoute<{ sandboxCreateOrder: OrderBody }>({
    operationId: "createSandboxOrder",
    method: "POST",
    path: "/public/v1/sandbox/orders",
    tag: "Sandbox",
    summary: "Generate an order in one of seven scenarios",
    description:
      "Runs the real order code path, so registered webhooks fire: order.created always, customer.created for a first-time customer, " +
      "order.cancelled for `cancelled`. A store with no catalog is seeded first. The order is PENDING except for `cancelled`.",
    scope: null,
    sandboxOnly: true,
    body: sandboxOrderInput,
    document: `mutation createSandboxOrder($scenario: SandboxScenario!) { sandboxCreateOrder(scenario: $scenario) { ${ORDER_DETAIL_FIELDS} } }`,
    variables: ({ body }) => ({ scenario: (body as { scenario: string }).scenario.toUpperCase() }),
    respond: (data) => ({ body: data.sandboxCreateOrder, headers: { location: `/public/v1/orders/${data.sandboxCreateOrder.id}` } }),
    status: 201,
    response: { description: "The generated order", schema: OrderDetailSchema, headers: locationHeader("/public/v1/orders/{id}") },
  }),
];
