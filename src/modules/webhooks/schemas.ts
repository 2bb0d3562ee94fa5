import type { JsonSchema } from "../../platform/route.js";
import { EVENT_TYPES } from "../events/types.js";

export const WebhookEventTypeSchema: JsonSchema = { type: "string", enum: [...EVENT_TYPES], description: "A subscribable event type" };

export const CreateWebhookEndpointBody: JsonSchema = {
  type: "object",
  required: ["url", "events"],
  additionalProperties: false,
  properties: {
    url: { type: "string", format: "uri", maxLength: 2048, description: "https:// (http:// is accepted in SANDBOX); public hosts only" },
    events: { type: "array", minItems: 1, items: WebhookEventTypeSchema, description: "Each needs its event's read scope in the token" },
  },
};
