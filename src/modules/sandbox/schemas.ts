import type { JsonSchema } from "../../platform/route.js";
import { defineBody } from "../../platform/validate.js";
import { SCENARIOS } from "./scenarios.js";
import { SANDBOX_EVENT_TYPES } from "./fire.js";

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
