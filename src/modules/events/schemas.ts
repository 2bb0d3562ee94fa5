import type { JsonSchema } from "../../platform/json.js";
import { limitParam, matching, uuid } from "../../platform/schemas.js";
import { EVENT_TYPES } from "./types.js";

/** A sequence number as text: the feed's cursor and a subscription's resume point. */
const sequenceParam: JsonSchema = {
  type: "string",
  ...matching("^\\d{1,16}$", "must be a sequence number (1 to 16 digits)"),
  description:
    "The sequence of the last event read (pagination.nextCursor of the previous page); one above the store's latest sequence (another store's) is 400 INVALID_REQUEST",
};

/** Event types: a list in GraphQL, comma-separated text in REST's query (the row's `lists`). */
const typesArg: JsonSchema = { type: "array", title: "event types", items: { type: "string", enum: [...EVENT_TYPES] } };

/** The arguments of GET /public/v1/events and the `events` query, by name. */
export const EVENT_LIST_ARGS = { after: sequenceParam, types: typesArg, limit: limitParam } satisfies Record<string, JsonSchema>;

/** The `storeEvents` subscription's arguments. */
export const STORE_EVENTS_ARGS = { storeId: uuid, types: typesArg, after: sequenceParam } satisfies Record<string, JsonSchema>;
