import type { JsonSchema } from "../../platform/json.js";
import { amount } from "../../platform/schemas.js";
import { CREATE_ORDER_PROPERTIES } from "../orders/schemas.js";
import { SCENARIOS } from "./scenarios.js";
import { SANDBOX_EVENT_TYPES } from "./fire.js";
import { fullPath, ORDER_STATUSES } from "../orders/lifecycle.js";
import { DEFAULT_STEP_SECONDS, MAX_STEP_SECONDS } from "./simulate.js";

const { items, customer, notes, scheduledFor } = CREATE_ORDER_PROPERTIES;

export const SandboxOrderSchema: JsonSchema = {
  type: "object",
  required: ["scenario"],
  properties: {
    scenario: {
      type: "string",
      enum: [...SCENARIOS],
      description:
        "delivery: fee and full address; pickup: counter pickup; scheduled: future delivery; cash: pay on delivery with change; " +
        "online_payment: approved digital payment; with_discount: coupon applied; cancelled: cancelled by the restaurant",
    },
    overrides: {
      type: "object",
      description:
        "Extension to the contract. Values that replace the scenario's, checked as on POST /orders: `items` (prices still come " +
        "from the catalog; an unknown product is 422), `customer` (created, emitting customer.created), `notes`, `scheduledFor`, " +
        "and the order's `deliveryFee` and `discount`. The total is subtotal + deliveryFee − discount; one below zero is 422.",
      properties: {
        items,
        customer,
        deliveryFee: { ...amount, description: "Replaces the store's delivery fee, on a PICKUP order too" },
        discount: { ...amount, description: "Replaces the scenario's discount (with_discount keeps its coupon code)" },
        notes,
        scheduledFor,
      },
    },
    simulate: {
      type: "object",
      required: ["until"],
      description:
        "Extension to the contract. Moves the order on its own, one status per step, through the same status change as " +
        "PATCH /orders/{id}/status (its events, version and webhooks), along its full path (DELIVERY: " +
        `${fullPath("DELIVERY").join(" → ")}; PICKUP: ${fullPath("PICKUP").join(" → ")}), and stops at \`until\`. ` +
        "A status the order does not reach " +
        "(PENDING, CANCELLED, DISPATCHED for `pickup`, anything for `cancelled`) is 422 and creates nothing. Any change to the " +
        "order by someone else (a status change, a cancellation) ends the simulation.",
      properties: {
        until: { type: "string", enum: [...ORDER_STATUSES], description: "The status the simulation stops at" },
        stepSeconds: {
          type: "integer",
          minimum: 1,
          maximum: MAX_STEP_SECONDS,
          default: DEFAULT_STEP_SECONDS,
          description: `Seconds between steps, at least (default ${DEFAULT_STEP_SECONDS}); the first step comes this long after the order is created`,
        },
      },
    },
  },
};

/** fireSandboxEvent's arguments together, as its body: any subscribable event type. */
export const SANDBOX_EVENT_BODY: JsonSchema = {
  type: "object",
  required: ["type"],
  properties: { type: { type: "string", enum: [...SANDBOX_EVENT_TYPES], description: "The event type to fire" } },
};
