import { isRecord, type JsonSchema } from "../../platform/json.js";
import { cursorParam, limitParam } from "../../platform/schemas.js";
import { DEFAULT_PAGE_SIZE, invalidCursor } from "../../platform/schema/pagination.js";
import { defineQuery } from "../../platform/validate.js";
import type { VersionChange, VersionedDocument } from "./change.js";

/**
 * 2026-12-01: one name per concept. The first version published both names of several concepts; this one keeps
 * one of each and gives the webhook lists the shape of every other list.
 */

/** A copy without some keys; a plain loop, as it runs on every order of a page. */
function without(value: Record<string, unknown>, ...names: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) if (!names.includes(key)) out[key] = value[key];
  return out;
}

/** A schema's `properties`, which the delta edits: a schema without them is not the one the change was written for. */
function propertiesOf(schema: JsonSchema): Record<string, JsonSchema> {
  const properties: Record<string, JsonSchema> = {};
  if (isRecord(schema.properties)) for (const [name, sub] of Object.entries(schema.properties)) if (isRecord(sub)) properties[name] = sub;
  if (Object.keys(properties).length === 0) throw new Error("version 2026-12-01: a schema it edits has no properties");
  return properties;
}

/** A component's schema without some properties, in `properties` and `required` alike. */
function dropProperties(schema: JsonSchema, ...names: string[]): void {
  schema.properties = without(propertiesOf(schema), ...names);
  if (Array.isArray(schema.required)) schema.required = schema.required.filter((name) => !names.includes(String(name)));
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

/** A text of the document as this change rewrites it: the old wording must be there, or the delta is stale. */
function replaceText(holder: JsonSchema, key: string, from: string, to: string): void {
  const text = holder[key];
  if (typeof text !== "string" || !text.includes(from)) throw new Error(`version 2026-12-01: "${from.slice(0, 40)}…" is no longer in ${key}`);
  holder[key] = text.replace(from, to);
}

const webhookEndpointsQuery = defineQuery({ limit: limitParam, cursor: cursorParam });

/** The endpoints list as a page: the endpoints after `cursor` (an endpoint's id), `limit` of them. */
function endpointPage(body: unknown, query: Record<string, unknown>): unknown {
  if (!Array.isArray(body)) return body;
  const ids = body.map((endpoint: unknown) => (isRecord(endpoint) ? endpoint.id : undefined));
  const start = typeof query.cursor === "string" ? ids.indexOf(query.cursor) + 1 : 0;
  if (start === 0 && typeof query.cursor === "string") throw invalidCursor();
  const limit = typeof query.limit === "number" ? query.limit : DEFAULT_PAGE_SIZE;
  const data = body.slice(start, start + limit);
  const hasMore = start + limit < body.length;
  return { data, pagination: { hasMore, nextCursor: hasMore ? (ids[start + limit - 1] ?? null) : null } };
}

/** The phone of a customer event: null when the customer gave none (the first version sends ""). */
const nullPhone = (data: Record<string, unknown>): Record<string, unknown> => (data.phone === "" ? { ...data, phone: null } : data);

const NULLABLE_PHONE: JsonSchema = { anyOf: [{ type: "string" }, { type: "null" }], description: "null when the customer gave no phone" };

const pageOf = (items: JsonSchema): JsonSchema => ({
  type: "object",
  required: ["data", "pagination"],
  properties: { data: items, pagination: { $ref: "#/components/schemas/Pagination" } },
});

export const V2026_12_01: VersionChange = {
  version: "2026-12-01",
  releasedAt: "2026-12-01",
  changes: [
    "Orders drop `displayId` and `totalAmount`: read `orderNumber` (an integer) and `total`.",
    "`pagination` drops `cursor`: pass `nextCursor` back as the `cursor` query parameter.",
    "`GET /public/v1/webhooks` answers `{ data, pagination }` and takes `limit` and `cursor`, like every other list.",
    "`GET /public/v1/webhooks/deliveries` answers `{ data, pagination }` (the X-Next-Cursor and Link headers stay).",
    "`customer.created` and `customer.updated` events carry `phone: null` when the customer gave none (was an empty string).",
    "Webhook endpoints show `apiVersion`, the version their deliveries are rendered in (settable on creation and by PATCH in every version).",
  ],
  added: {
    WebhookEndpoint: ["apiVersion"],
    WebhookEndpointCreated: ["apiVersion"],
  },
  requests: {
    listWebhookEndpoints: (query) => webhookEndpointsQuery.check(query),
  },
  components: {
    Order: (order) => without(order, "displayId", "totalAmount"),
    OrderDetail: (order) => without(order, "displayId", "totalAmount"),
    Pagination: (pagination) => without(pagination, "cursor"),
  },
  operations: {
    listWebhookEndpoints: (body, { query }) => endpointPage(body, query),
    listWebhookDeliveries: (body, { headers }) => {
      const nextCursor = headers["x-next-cursor"] ?? null;
      return { data: body, pagination: { hasMore: nextCursor !== null, nextCursor } };
    },
  },
  events: {
    "customer.created": nullPhone,
    "customer.updated": nullPhone,
  },
  openapi(doc) {
    for (const name of ["Order", "OrderDetail"]) dropProperties(component(doc, name), "displayId", "totalAmount");
    const pagination = component(doc, "Pagination");
    dropProperties(pagination, "cursor");
    pagination.description = "Keyset pagination: pass nextCursor back as `cursor` for the next page.";
    const { nextCursor } = propertiesOf(pagination);
    nextCursor.description = "Id of the last returned item; null on the last page.";
    dropProperties(propertiesOf(component(doc, "EventPage")).pagination, "cursor");
    doc.components.schemas.WebhookEndpointList = pageOf(component(doc, "WebhookEndpointList"));
    doc.components.schemas.WebhookDeliveryPage = pageOf(component(doc, "WebhookDeliveryPage"));
    const endpoints = operation(doc, "listWebhookEndpoints");
    const query = Object.entries(webhookEndpointsQuery.properties).map(([name, { description, ...schema }]) => ({
      name,
      in: "query",
      required: false,
      description,
      schema,
    }));
    endpoints.parameters = [...query, ...(endpoints.parameters ?? [])];
    for (const type of ["CustomerCreatedEvent", "CustomerUpdatedEvent"]) {
      const { data } = propertiesOf(component(doc, type));
      data.properties = { ...propertiesOf(data), phone: NULLABLE_PHONE };
    }
    replaceText(
      doc.info,
      "description",
      'answer\n  JSON arrays, newest first; the next page\'s cursor travels in `X-Next-Cursor` and `Link: <…>; rel="next"`.',
      'answer\n  `{ data, pagination }` like every other list; the deliveries\' next cursor also travels in `X-Next-Cursor` and `Link: <…>; rel="next"`.',
    );
    replaceText(
      doc.info,
      "description",
      '- **Order fields, both families.** An order carries `id` (uuid) and both published field families:\n  `displayId` (string, e.g. `"1042"`) and `orderNumber` (integer 1042, a per-store sequence);\n  `totalAmount` and `total` (the same number); plus',
      "- **Order fields.** An order carries `id` (uuid), `orderNumber` (integer 1042, a per-store sequence) and\n  `total`; plus",
    );
    replaceText(
      doc.info,
      "description",
      "- **Pagination, both cursor names.** `pagination` has `hasMore`, `cursor` **and** `nextCursor`: both\n  are the id",
      "- **Pagination.** `pagination` has `hasMore` and `nextCursor`:\n  the id",
    );
    replaceText(
      doc.info,
      "description",
      "both forms (both order field families, both cursor names)",
      "one name per concept (`orderNumber` and `total` for orders, `nextCursor` for pages)",
    );
  },
};
