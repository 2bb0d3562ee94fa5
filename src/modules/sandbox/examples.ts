import { one, PRODUCT, STORE_ID, type OperationExamples } from "../../platform/examples.js";
import { envelope } from "../events/examples.js";
import { ORDER_DETAIL, unknownProduct } from "../orders/examples.js";
import { SANDBOX_EVENT_TYPES } from "./fire.js";
import type { sandboxRoutes } from "./routes.js";

type SandboxOperationId = (typeof sandboxRoutes)[number]["operationId"];

export const sandboxExamples = {
  seedSandbox: {
    response: one("The sandbox store's fake catalog and customers", { storeId: STORE_ID, categories: 3, products: 6, customers: 3 }),
    problem: {
      summary: "A PRODUCTION token",
      code: "FORBIDDEN",
      detail: "Sandbox operations answer SANDBOX tokens only: use your sandbox credentials.",
      instance: "/public/v1/sandbox/seed",
    },
  },
  createSandboxOrder: {
    request: {
      delivery: { summary: "A delivery order with fee and full address", value: { scenario: "delivery" } },
      overrides: {
        summary: "A cash order with your own items and customer",
        value: {
          scenario: "cash",
          overrides: {
            items: [{ productId: PRODUCT.burger, quantity: 2, notes: "No pickles", additionals: [{ name: "Bacon", quantity: 1 }] }],
            customer: { name: "Marcos Pereira", phone: "+55 11 97777-1234" },
            deliveryFee: 7.9,
          },
        },
      },
      simulate: {
        summary: "A delivery order that then moves on its own, a status every 10 seconds, until DELIVERED",
        value: { scenario: "delivery", simulate: { until: "DELIVERED", stepSeconds: 10 } },
      },
    },
    response: one("The delivery scenario's order", ORDER_DETAIL),
    problem: unknownProduct("An override naming a product the catalog does not have", "/public/v1/sandbox/orders", "overrides.items[0].productId"),
  },
  fireSandboxEvent: {
    request: one("Fire a store.updated event", { type: "store.updated" }),
    response: one(
      "The event recorded, as the feed shows it",
      envelope("store.updated", 57, "2e6e3545-750b-4d1e-a654-da4823a86179", "2025-03-01T18:40:12.481Z"),
    ),
    otherResponses: {
      202: one("catalog.updated: the product paused, its event follows when the window closes", {
        action: "product.paused",
        itemId: PRODUCT.cola,
        itemType: "product",
      }),
    },
    problem: {
      summary: "An event type that does not exist",
      code: "INVALID_REQUEST",
      detail: `The request body failed validation: \`type\` must be one of: ${SANDBOX_EVENT_TYPES.join(", ")}.`,
      instance: "/public/v1/sandbox/events",
      errors: [
        { field: "type", code: "INVALID_VALUE", message: `\`type\` must be one of: ${SANDBOX_EVENT_TYPES.join(", ")}`, allowed: [...SANDBOX_EVENT_TYPES] },
      ],
    },
  },
} satisfies Record<SandboxOperationId, OperationExamples>;
