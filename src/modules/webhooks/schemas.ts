import type { JsonSchema } from "../../platform/route.js";
import { uuid } from "../../platform/schemas.js";
import { defineBody, definePath, defineQuery } from "../../platform/validate.js";
import { EVENT_TYPES, TEST_EVENT_TYPE } from "../events/types.js";
import { WEBHOOK_DELIVERY_STATUSES } from "./statuses.js";

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

/* The operations' inputs: REST's route rows and the GraphQL resolvers check with these same validators. */

export const createWebhookEndpointInput = defineBody(CreateWebhookEndpointBody);

export const listWebhookDeliveriesInput = defineQuery({
  status: { type: "string", enum: [...WEBHOOK_DELIVERY_STATUSES] },
  endpointId: uuid,
  eventType: { type: "string", enum: [...EVENT_TYPES, TEST_EVENT_TYPE] },
  limit: { type: "integer", minimum: 1, maximum: 100, default: 20 },
  cursor: { type: "string", description: "X-Next-Cursor of the previous page" },
});

/** A delivery's route parameter, and the `id` argument of its GraphQL fields (reported as `deliveryId`). */
export const deliveryIdPath = definePath({ deliveryId: uuid });

/** What administrators may narrow the webhook lists by (GraphQL only). */
export const adminFilterInput = defineQuery({ storeId: uuid, applicationId: uuid });
