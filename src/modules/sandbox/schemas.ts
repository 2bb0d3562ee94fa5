import type { JsonSchema } from "../../platform/json.js";
import { amount } from "../../platform/schemas.js";
import { defineBody } from "../../platform/validate.js";
import { CREATE_ORDER_PROPERTIES } from "../orders/schemas.js";
import { SCENARIOS } from "./scenarios.js";
import { SANDBOX_EVENT_TYPES } from "./fire.js";

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
  },
};

/** createSandboxOrder's input: the REST route row and the GraphQL resolver check with it. */
export const sandboxOrderInput = defineBody(SandboxOrderSchema);

/** fireSandboxEvent's input: any subscribable event type. */
export const sandboxEventInput = defineBody({
  type: "object",
  required: ["type"],
  properties: { type: { type: "string", enum: [...SANDBOX_EVENT_TYPES], description: "The event type to fire" } },
});
