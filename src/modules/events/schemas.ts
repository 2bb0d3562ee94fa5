import type { JsonSchema } from "../../platform/json.js";
import { limitParam, matching, uuid } from "../../platform/schemas.js";
import { definePath, defineQuery } from "../../platform/validate.js";
import { EVENT_TYPES } from "./types.js";

/** A sequence number as text: the feed's cursor and a subscription's resume point. */
const sequenceParam: JsonSchema = {
  type: "string",
  ...matching("^\\d{1,16}$", "must be a sequence number (1 to 16 digits)"),
  description:
    "The sequence of the last event read (pagination.nextCursor of the previous page); one above the store's latest sequence (another store's) is 400 INVALID_REQUEST",
};

const typeAlternatives = EVENT_TYPES.map((t) => t.replace(/\./g, "\\.")).join("|");

/** Event types as a comma-separated list (GraphQL's list argument is joined into the same text before the check). */
const typesParam: JsonSchema = {
  type: "string",
  ...matching(`^(${typeAlternatives})(,(${typeAlternatives}))*$`, `must be event types separated by commas, among: ${EVENT_TYPES.join(", ")}`),
  description: `Comma-separated event types, among ${EVENT_TYPES.join(", ")}`,
};

/** GET /public/v1/events and the `events` query. */
export const listEventsInput = defineQuery({ after: sequenceParam, types: typesParam, limit: limitParam });

/** The `storeEvents` subscription. */
export const storeEventsInput = defineQuery({ storeId: uuid, types: typesParam, after: sequenceParam });

/** An event's route parameter, and the `id` argument of the `event` query (reported as `eventId`). */
export const eventIdPath = definePath({ eventId: uuid });
