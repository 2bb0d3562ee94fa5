import { MAX_PAGE_SIZE } from "../../platform/schema/pagination.js";
import { change, eventField, fieldAdded, fieldRemoved, listAsArray, queryIgnored, reworded, type VersionChange } from "./change.js";

/**
 * 2026-12-01: one name per concept. The first version published both names of several concepts; this one keeps
 * one of each and gives the webhook lists the shape of every other list. The code answers in this version's shape;
 * each instruction below also says how 2026-11-20 differed.
 */
export const V2026_12_01: VersionChange = {
  version: "2026-12-01",
  // Served from the day its code shipped, ahead of the date it is named for.
  releasedAt: "2026-11-26",
  changes: [
    change(
      "Orders drop `displayId` and `totalAmount`: read `orderNumber` (an integer) and `total`.",
      fieldRemoved(["Order", "OrderDetail"], "displayId", {
        before: "orderNumber",
        schema: { type: "string", description: 'orderNumber as a string, e.g. "1042" (formal schema name)' },
        value: (order) => String(order.orderNumber),
        graphql: "Order.displayId",
      }),
      fieldRemoved(["Order", "OrderDetail"], "totalAmount", {
        after: "total",
        schema: { type: "number", "x-decimal-places": 2, description: "Same as total (formal schema name). Amount with at most two decimals." },
        value: (order) => order.total,
        graphql: "Order.totalAmount",
      }),
      reworded(
        "intro",
        "- **Order fields.** An order carries `id` (uuid), `orderNumber` (integer 1042, a per-store sequence) and\n  `total`; plus",
        '- **Order fields, both families.** An order carries `id` (uuid) and both published field families:\n  `displayId` (string, e.g. `"1042"`) and `orderNumber` (integer 1042, a per-store sequence);\n  `totalAmount` and `total` (the same number); plus',
      ),
      reworded("intro", "one name per concept (`orderNumber` and `total` for orders, ", "both forms (both order field families, "),
    ),
    change(
      "`pagination` drops `cursor`: pass `nextCursor` back as the `cursor` query parameter.",
      fieldRemoved(["Pagination"], "cursor", {
        before: "nextCursor",
        schema: (nextCursor) => structuredClone(nextCursor),
        value: (pagination) => pagination.nextCursor,
        graphql: "Pagination.cursor",
      }),
      reworded(
        { component: "Pagination" },
        "Keyset pagination: pass nextCursor back as `cursor` for the next page.",
        "Keyset pagination: pass nextCursor (or cursor, the same value) back as `cursor` for the next page.",
      ),
      reworded(
        { component: "Pagination", property: "nextCursor" },
        "Id of the last returned item; null on the last page.",
        "Same value as cursor (both published names).",
      ),
      reworded(
        "intro",
        "- **Pagination.** `pagination` has `hasMore` and `nextCursor`:\n  the id",
        "- **Pagination, both cursor names.** `pagination` has `hasMore`, `cursor` **and** `nextCursor`: both\n  are the id",
      ),
      reworded("intro", "`nextCursor` for pages)", "both cursor names)"),
    ),
    // The two lists changed together, and the introduction words them in one sentence.
    change(
      [
        "`GET /public/v1/webhooks` answers `{ data, pagination }` and takes `limit` and `cursor`, like every other list.",
        "`GET /public/v1/webhooks/deliveries` answers `{ data, pagination }` (the X-Next-Cursor and Link headers stay).",
      ],
      listAsArray("WebhookEndpointList", "listWebhookEndpoints"),
      listAsArray("WebhookDeliveryPage", "listWebhookDeliveries"),
      // The first version answered every endpoint: at most 20 per Application and store, so one page of the largest size holds them all.
      queryIgnored("listWebhookEndpoints", { limit: MAX_PAGE_SIZE }),
      reworded({ operation: "listWebhookEndpoints" }, "A page of the endpoints", "Every endpoint"),
      reworded(
        "intro",
        'answer\n  `{ data, pagination }` like every other list; the deliveries\' next cursor also travels in `X-Next-Cursor` and `Link: <…>; rel="next"`.',
        'answer\n  JSON arrays, newest first; the next page\'s cursor travels in `X-Next-Cursor` and `Link: <…>; rel="next"`.',
      ),
    ),
    change(
      "`customer.created` and `customer.updated` events carry `phone: null` when the customer gave none (was an empty string).",
      eventField(["customer.created", "customer.updated"], "phone", {
        schema: { description: "Empty when the customer gave no phone", type: "string" },
        value: (phone) => (phone === null ? "" : phone),
      }),
    ),
    change(
      "Webhook endpoints show `apiVersion`, the version their deliveries are rendered in (settable on creation and by PATCH in every version).",
      fieldAdded(["WebhookEndpoint", "WebhookEndpointCreated"], "apiVersion"),
    ),
  ],
};
