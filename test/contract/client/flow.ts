import createClient, { type Middleware } from "openapi-fetch";
import type { components, paths } from "./generated/openapi.js";

/**
 * A partner's first integration, written against the client openapi-typescript generates from
 * schema/openapi.json and called with openapi-fetch: test/contract/client.test.ts generates the types,
 * compiles this file with `tsc --strict` and runs it against a real server. Only the generated types are
 * used, so a change to the document that breaks a partner's code fails to compile here.
 */

type Schemas = components["schemas"];

export interface FlowInput {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** A product of the store's catalog, to order. */
  productId: string;
  /** Where the webhook endpoint points. */
  receiverUrl: string;
  /** Sees every request and response (the test validates them against the document). */
  observe: Middleware;
}

export interface FlowResult {
  orderIds: string[];
  pagedOrderIds: string[];
  cancellation: Schemas["OrderDetail"];
  endpoints: Schemas["WebhookEndpoint"][];
  events: Schemas["WebhookEvent"][];
}

/** The body of a call that must succeed, or an error naming what the server answered. */
function ok<T>(result: { data?: T; error?: unknown; response: Response }, what: string): T {
  if (result.data === undefined) throw new Error(`${what}: HTTP ${result.response.status} ${JSON.stringify(result.error)}`);
  return result.data;
}

// The discriminated bodies: a cancellation without a reason does not compile.
// @ts-expect-error CANCELLED needs a reason
const _withoutReason: Schemas["StatusChange"] = { status: "CANCELLED" };
const _advance: Schemas["StatusChange"] = { status: "CONFIRMED" };

export async function partnerFlow(input: FlowInput): Promise<FlowResult> {
  const client = createClient<paths>({ baseUrl: input.baseUrl });
  client.use(input.observe);

  const token = ok(
    await client.POST("/partner/auth/token", { body: { grant_type: "client_credentials", client_id: input.clientId, client_secret: input.clientSecret } }),
    "token",
  );
  client.use({
    onRequest({ request }) {
      request.headers.set("Authorization", `${token.token_type} ${token.access_token}`);
      return request;
    },
  });

  const store = ok(await client.GET("/public/v1/store"), "store");
  const customer = ok(
    await client.POST("/public/v1/customers", { body: { name: `Customer of ${store.name}`, phone: "+55 11 99999-0000", email: "ana@example.com" } }),
    "create customer",
  );

  const orderIds: string[] = [];
  for (const quantity of [1, 2]) {
    const created = ok(
      await client.POST("/public/v1/orders", {
        params: { header: { "Idempotency-Key": crypto.randomUUID() } },
        body: { type: "PICKUP", customerId: customer.id, items: [{ productId: input.productId, quantity }] },
      }),
      "create order",
    );
    const total: number = created.total;
    if (total <= 0) throw new Error(`order ${created.id} has total ${total}`);
    orderIds.push(created.id);
  }
  const order = ok(await client.GET("/public/v1/orders/{id}", { params: { path: { id: orderIds[0] } } }), "get order");

  // Keyset pagination: one order per page, following nextCursor.
  const pagedOrderIds: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page: Schemas["OrderPage"] = ok(await client.GET("/public/v1/orders", { params: { query: { limit: 1, cursor } } }), "list orders");
    pagedOrderIds.push(...page.data.map((o) => o.id));
    if (!page.pagination.hasMore || page.pagination.nextCursor === null) break;
    cursor = page.pagination.nextCursor;
  }

  for (const status of ["CONFIRMED", "PREPARING"] as const) {
    ok(await client.PATCH("/public/v1/orders/{id}/status", { params: { path: { id: order.id } }, body: { status } }), `status ${status}`);
  }
  const cancellation = ok(
    await client.PATCH("/public/v1/orders/{id}/status", {
      params: { path: { id: order.id } },
      body: { status: "CANCELLED", reason: "The customer called to cancel" },
    }),
    "cancel",
  );

  const endpoint = ok(
    await client.POST("/public/v1/webhooks", { body: { url: input.receiverUrl, events: ["order.created", "order.cancelled"] } }),
    "create webhook",
  );
  if (!endpoint.secret.startsWith("whsec_")) throw new Error("the endpoint's secret is not a whsec_ secret");
  const endpoints = ok(await client.GET("/public/v1/webhooks"), "list webhooks").data;

  // The event feed, read to its end: each item's data is typed by its eventType.
  const events: Schemas["WebhookEvent"][] = [];
  let after: string | undefined;
  for (;;) {
    const page = ok(await client.GET("/public/v1/events", { params: { query: { after, limit: 2 } } }), "events");
    events.push(...page.data);
    if (!page.pagination.hasMore) break;
    after = page.pagination.nextCursor;
  }
  for (const event of events) {
    if (event.eventType === "order.cancelled" && event.data.reason.length === 0) throw new Error("a cancellation without its reason");
    if (event.eventType === "order.created" && !orderIds.includes(event.data.orderId)) throw new Error(`an order.created for ${event.data.orderId}`);
  }
  return { orderIds, pagedOrderIds, cancellation, endpoints, events };
}
