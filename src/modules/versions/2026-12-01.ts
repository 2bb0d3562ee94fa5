import { isRecord, type JsonSchema } from "../../platform/json.js";
import { MAX_PAGE_SIZE } from "../../platform/schema/pagination.js";
import type { VersionChange, VersionedDocument } from "./change.js";

/**
 * 2026-12-01: one name per concept. The first version published both names of several concepts; this one keeps
 * one of each and gives the webhook lists the shape of every other list. The code answers in this version's shape;
 * what follows turns it back into 2026-11-20's.
 */

/** A copy of `value` with `extra` placed before or after the key `at`; a plain loop, as it runs on every order of a page. */
function insert(value: Record<string, unknown>, at: string, where: "before" | "after", extra: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (key === at && where === "before") Object.assign(out, extra);
    out[key] = value[key];
    if (key === at && where === "after") Object.assign(out, extra);
  }
  return out;
}

function without(value: Record<string, unknown>, ...names: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) if (!names.includes(key)) out[key] = value[key];
  return out;
}

/** An order with the first version's second names: `displayId` (orderNumber as text) and `totalAmount` (total). */
function withBothOrderNames(order: Record<string, unknown>): Record<string, unknown> {
  const named = "orderNumber" in order ? insert(order, "orderNumber", "before", { displayId: String(order.orderNumber) }) : order;
  return "total" in named ? insert(named, "total", "after", { totalAmount: named.total }) : named;
}

/** A page's items alone: the first version answered both webhook lists as JSON arrays. */
const itemsOf = (body: unknown): unknown => (isRecord(body) && Array.isArray(body.data) ? body.data : body);

/** The phone of a customer event: the first version sends "" when the customer gave none. */
const emptyPhone = (data: Record<string, unknown>): Record<string, unknown> => (data.phone === null ? { ...data, phone: "" } : data);

/* The OpenAPI delta's edits. Each checks that the document still holds what the change was written against. */

function propertiesOf(schema: JsonSchema): Record<string, JsonSchema> {
  const properties: Record<string, JsonSchema> = {};
  if (isRecord(schema.properties)) for (const [name, sub] of Object.entries(schema.properties)) if (isRecord(sub)) properties[name] = sub;
  if (Object.keys(properties).length === 0) throw new Error("version 2026-12-01: a schema it edits has no properties");
  return properties;
}

function component(doc: VersionedDocument, name: string): JsonSchema {
  const schema = doc.components.schemas[name];
  if (!schema) throw new Error(`version 2026-12-01: the OpenAPI document has no component ${name}`);
  return schema;
}

function operation(doc: VersionedDocument, operationId: string) {
  for (const item of Object.values(doc.paths)) for (const op of Object.values(item)) if (op.operationId === operationId) return op;
  throw new Error(`version 2026-12-01: the OpenAPI document has no operation ${operationId}`);
}

function requiredOf(schema: JsonSchema): string[] {
  return Array.isArray(schema.required) ? schema.required.map(String) : [];
}

/** Adds properties to a schema beside an existing one, in `properties` and `required` alike. */
function addProperties(schema: JsonSchema, at: string, where: "before" | "after", added: Record<string, JsonSchema>): void {
  const properties = propertiesOf(schema);
  if (!(at in properties)) throw new Error(`version 2026-12-01: the schema has no property ${at}`);
  schema.properties = insert(properties, at, where, added);
  const required = requiredOf(schema);
  const i = required.indexOf(at);
  if (i >= 0)
    schema.required = [...required.slice(0, where === "before" ? i : i + 1), ...Object.keys(added), ...required.slice(where === "before" ? i : i + 1)];
}

function dropProperties(schema: JsonSchema, ...names: string[]): void {
  schema.properties = without(propertiesOf(schema), ...names);
  if (Array.isArray(schema.required)) schema.required = requiredOf(schema).filter((name) => !names.includes(name));
}

/** A text of the document as this change rewrites it: the new wording must be there, or the delta is stale. */
function replaceText(holder: JsonSchema, key: string, from: string, to: string): void {
  const text = holder[key];
  if (typeof text !== "string" || !text.includes(from)) throw new Error(`version 2026-12-01: "${from.slice(0, 40)}…" is no longer in ${key}`);
  holder[key] = text.replace(from, to);
}

/** The items schema of a `{ data, pagination }` page component. */
function pageItems(page: JsonSchema): JsonSchema {
  const { data } = propertiesOf(page);
  if (!data || !isRecord(data.items)) throw new Error("version 2026-12-01: a list it unwraps is not a { data, pagination } page");
  return data.items;
}

const ORDER_NAMES = {
  displayId: { type: "string", description: 'orderNumber as a string, e.g. "1042" (formal schema name)' },
  totalAmount: { type: "number", "x-decimal-places": 2, description: "Same as total (formal schema name). Amount with at most two decimals." },
} satisfies Record<string, JsonSchema>;

const EMPTY_PHONE: JsonSchema = { description: "Empty when the customer gave no phone", type: "string" };

/** The introduction's sentences, as 2026-12-01 words them and as 2026-11-20 did. */
const TEXTS: [now: string, before: string][] = [
  [
    'answer\n  `{ data, pagination }` like every other list; the deliveries\' next cursor also travels in `X-Next-Cursor` and `Link: <…>; rel="next"`.',
    'answer\n  JSON arrays, newest first; the next page\'s cursor travels in `X-Next-Cursor` and `Link: <…>; rel="next"`.',
  ],
  [
    "- **Order fields.** An order carries `id` (uuid), `orderNumber` (integer 1042, a per-store sequence) and\n  `total`; plus",
    '- **Order fields, both families.** An order carries `id` (uuid) and both published field families:\n  `displayId` (string, e.g. `"1042"`) and `orderNumber` (integer 1042, a per-store sequence);\n  `totalAmount` and `total` (the same number); plus',
  ],
  [
    "- **Pagination.** `pagination` has `hasMore` and `nextCursor`:\n  the id",
    "- **Pagination, both cursor names.** `pagination` has `hasMore`, `cursor` **and** `nextCursor`: both\n  are the id",
  ],
  ["one name per concept (`orderNumber` and `total` for orders, `nextCursor` for pages)", "both forms (both order field families, both cursor names)"],
];

export const V2026_12_01: VersionChange = {
  version: "2026-12-01",
  // Served from the day its code shipped, ahead of the date it is named for.
  releasedAt: "2026-11-26",
  changes: [
    "Orders drop `displayId` and `totalAmount`: read `orderNumber` (an integer) and `total`.",
    "`pagination` drops `cursor`: pass `nextCursor` back as the `cursor` query parameter.",
    "`GET /public/v1/webhooks` answers `{ data, pagination }` and takes `limit` and `cursor`, like every other list.",
    "`GET /public/v1/webhooks/deliveries` answers `{ data, pagination }` (the X-Next-Cursor and Link headers stay).",
    "`customer.created` and `customer.updated` events carry `phone: null` when the customer gave none (was an empty string).",
    "Webhook endpoints show `apiVersion`, the version their deliveries are rendered in (settable on creation and by PATCH in every version).",
  ],
  requests: {
    // The first version ignored the query and answered every endpoint: at most 20 per Application and store, so
    // one page of the largest size holds them all.
    listWebhookEndpoints: (query) => {
      for (const name of Object.keys(query)) delete query[name];
      query.limit = MAX_PAGE_SIZE;
    },
  },
  components: {
    Order: withBothOrderNames,
    OrderDetail: withBothOrderNames,
    Pagination: (pagination) => ("nextCursor" in pagination ? insert(pagination, "nextCursor", "before", { cursor: pagination.nextCursor }) : pagination),
    WebhookEndpoint: (endpoint) => without(endpoint, "apiVersion"),
    WebhookEndpointCreated: (endpoint) => without(endpoint, "apiVersion"),
  },
  operations: {
    listWebhookEndpoints: itemsOf,
    listWebhookDeliveries: itemsOf,
  },
  events: {
    "customer.created": emptyPhone,
    "customer.updated": emptyPhone,
  },
  openapi(doc) {
    for (const name of ["Order", "OrderDetail"]) {
      addProperties(component(doc, name), "orderNumber", "before", { displayId: { ...ORDER_NAMES.displayId } });
      addProperties(component(doc, name), "total", "after", { totalAmount: { ...ORDER_NAMES.totalAmount } });
    }
    const pagination = component(doc, "Pagination");
    pagination.description = "Keyset pagination: pass nextCursor (or cursor, the same value) back as `cursor` for the next page.";
    const { nextCursor } = propertiesOf(pagination);
    addProperties(pagination, "nextCursor", "before", { cursor: { ...nextCursor } });
    nextCursor.description = "Same value as cursor (both published names).";
    const feedPagination = propertiesOf(component(doc, "EventPage")).pagination;
    addProperties(feedPagination, "nextCursor", "before", { cursor: { ...propertiesOf(feedPagination).nextCursor } });
    for (const name of ["WebhookEndpointList", "WebhookDeliveryPage"]) {
      doc.components.schemas[name] = { type: "array", items: pageItems(component(doc, name)) };
    }
    const endpoints = operation(doc, "listWebhookEndpoints");
    const parameters = (endpoints.parameters ?? []).filter((p) => p.in !== "query");
    if (parameters.length === endpoints.parameters?.length) throw new Error("version 2026-12-01: listWebhookEndpoints takes no query parameters");
    if (parameters.length) endpoints.parameters = parameters;
    else delete endpoints.parameters;
    replaceText(endpoints.responses["200"] ?? {}, "description", "A page of the endpoints", "Every endpoint");
    for (const name of ["WebhookEndpoint", "WebhookEndpointCreated"]) dropProperties(component(doc, name), "apiVersion");
    for (const type of ["CustomerCreatedEvent", "CustomerUpdatedEvent"]) {
      const { data } = propertiesOf(component(doc, type));
      data.properties = { ...propertiesOf(data), phone: { ...EMPTY_PHONE } };
    }
    for (const [now, before] of TEXTS) replaceText(doc.info, "description", now, before);
  },
};
