import { API_VERSIONS, FIRST_API_VERSION, LATEST_API_VERSION } from "../platform/versions.js";
import { versionList } from "../modules/versions/render.js";
import type { ErrorCode } from "../platform/errors.js";
import type { EventData, EventType } from "../platform/events/declaration.js";
import type { TestEventData } from "../modules/events/operational.js";
import { SANDBOX_ADDRESS as ADDRESS } from "../modules/sandbox/scenarios.js";
import { SANDBOX_EVENT_TYPES } from "../modules/sandbox/fire.js";
import { LOCAL_RECEIVER_ADVICE } from "../modules/webhooks/url-safety.js";
import { SCOPES } from "../platform/auth/scopes.js";

/**
 * Example bodies for the OpenAPI document, keyed by operationId: one pizzeria's data throughout (store
 * PZ7K2M9QXA, "Bella Napoli Pizzaria" in São Paulo, amounts in BRL), so a reader can follow one order from
 * the token to the webhook. test/contract/examples.test.ts validates every one against its schema and fails
 * when an operation has none; attachExamples (./openapi-attach.ts) puts them in the document.
 */

/** An OpenAPI Example Object. */
export interface Example {
  summary: string;
  value: unknown;
}

/** A problem+json body without the parts every problem shares (type, title, status, retryable, ids). */
export interface ProblemExample {
  summary: string;
  code: ErrorCode;
  detail: string;
  instance: string;
  errors?: Record<string, unknown>[];
  /** A token endpoint's OAuth 2.0 error code (its `error_description` is the detail). */
  error?: string;
}

export interface OperationExamples {
  /** Named application/json request bodies. */
  request?: Record<string, Example>;
  /** Named success bodies (none for 204). */
  response?: Record<string, Example>;
  /** Named bodies of the route's other success answers, by status. */
  otherResponses?: Record<number, Record<string, Example>>;
  /** A client error typical of the operation, shown on that status. */
  problem: ProblemExample;
}

const STORE_ID = "5f0c9a3e-2b7d-4c1a-9e55-0d3b8f6a4c21";
export const STORE_CODE = "PZ7K2M9QXA";
const ORDER_ID = "8c1e4b7a-3f2d-4e9a-b6c5-1d7f0a2e9b34";
const PICKUP_ORDER_ID = "c4a2e8f1-9b3d-4f7e-8a6c-2e5d1b9f7a03";
const CUSTOMER_ID = "2d9f6a1c-7b3e-4f58-a0c4-e8b15d3c7f62";
const NEW_CUSTOMER_ID = "7e3b1d9a-4c6f-4a2e-b8d5-9f1a3c7e5b20";
const ADDRESS_ID = "91c3e7a5-2b8d-4f6a-9c1e-5a7b3d9f1e48";
const CATEGORY = {
  pizzas: "05e39d57-5d76-42d9-a276-903185af8566",
  burgers: "1e22d75f-d3b7-44a0-bfb7-dd5210c547f0",
  drinks: "0a3510c5-0cbc-4294-9b87-e9cfb834da3a",
};
const PRODUCT = {
  margherita: "f84faa4c-a7be-4077-9579-42a2e66c31d1",
  pepperoni: "bfb9139d-9991-46c3-a24b-ad23452d2f00",
  burger: "45cc801e-1bd7-4494-aa49-b255371bc958",
  cola: "6d2f8b4e-1a7c-4e3d-9b5f-0c8a2e6d4f17",
};
export const ENDPOINT_ID = "b1b72eba-6f97-44af-8dfb-fad5369a528d";
const DELIVERY_ID = "76001c39-2d68-4fdf-8a84-e52a7d16b087";
const EVENT_ID = "96d280a2-ddeb-43db-bd67-2cb266c90f77";
export const WEBHOOK_URL = "https://erp.example.com/webhooks/bella-napoli";
const SECRET_PREFIX = "whsec_5oaG0P";

const T = {
  created: "2025-03-01T18:30:00.000Z",
  confirmed: "2025-03-01T18:31:12.480Z",
  customer: "2024-11-09T20:14:05.000Z",
  delivered: "2025-03-01T18:30:01.152Z",
};

const STORE = {
  id: STORE_ID,
  code: STORE_CODE,
  name: "Bella Napoli Pizzaria",
  slug: "bella-napoli-pizzaria",
  logo: "https://images.example.com/stores/bella-napoli.png",
  phone: "+55 11 3456-7890",
  isActive: true,
  status: "OPEN",
  address: { street: "Rua dos Pinheiros", number: "870", neighborhood: "Pinheiros", city: "São Paulo", state: "SP", postalCode: "05422-001", complement: null },
  openingHours: [
    { dayOfWeek: 2, opens: "18:00", closes: "23:30" },
    { dayOfWeek: 5, opens: "18:00", closes: "00:30" },
  ],
  publicSettings: { currency: "BRL", timezone: "America/Sao_Paulo", acceptsDelivery: true, acceptsPickup: true, minimumOrder: 30 },
};

const ANA = { id: CUSTOMER_ID, name: "Ana Souza", phone: "+55 11 91234-5678" };

/** The delivery order of the examples: 51.90 + 56.40 + 13.00 = 121.30, plus an 8.50 fee. */
const ORDER = {
  id: ORDER_ID,
  orderNumber: 1042,
  status: "PENDING",
  type: "DELIVERY",
  subtotal: 121.3,
  deliveryFee: 8.5,
  discount: 0,
  total: 129.8,
  customer: ANA,
  deliveryAddress: ADDRESS,
  items: [
    {
      id: "0cfd004c-6eef-4e74-bbf4-9c13b3c95583",
      productId: PRODUCT.margherita,
      name: "Margherita",
      quantity: 1,
      unitPrice: 42.9,
      total: 51.9,
      notes: "Well done, please",
      additionals: [{ name: "Stuffed crust", quantity: 1, price: 9 }],
    },
    {
      id: "76ce5f83-f743-401f-aa71-8d90acdb6433",
      productId: PRODUCT.pepperoni,
      name: "Pepperoni",
      quantity: 1,
      unitPrice: 49.9,
      total: 56.4,
      notes: null,
      additionals: [{ name: "Extra cheese", quantity: 1, price: 6.5 }],
    },
    { id: "6a077cdf-8de0-4618-b71b-633c02f0c929", productId: PRODUCT.cola, name: "Cola", quantity: 2, unitPrice: 6.5, total: 13, notes: null, additionals: [] },
  ],
  payments: [{ method: "CREDIT_CARD", status: "APPROVED", value: 129.8, changeFor: null }],
  version: 1,
  createdAt: T.created,
  updatedAt: T.created,
};

const ORDER_DETAIL = {
  ...ORDER,
  couponCode: null,
  statusHistory: [{ status: "PENDING", at: T.created, reason: null }],
  scheduledFor: null,
  notes: "Ring the bell twice",
  cancellationReason: null,
};

const CONFIRMED_DETAIL = {
  ...ORDER_DETAIL,
  status: "CONFIRMED",
  version: 2,
  updatedAt: T.confirmed,
  statusHistory: [...ORDER_DETAIL.statusHistory, { status: "CONFIRMED", at: T.confirmed, reason: null }],
};

/** A PICKUP order for a new customer paying cash: 2 × (32.50 + 5.00) + 49.90 = 124.90. */
const PICKUP_DETAIL = {
  id: PICKUP_ORDER_ID,
  orderNumber: 1043,
  status: "PENDING",
  type: "PICKUP",
  subtotal: 124.9,
  deliveryFee: 0,
  discount: 0,
  total: 124.9,
  customer: { id: NEW_CUSTOMER_ID, name: "Marcos Pereira", phone: "+55 11 97777-1234" },
  deliveryAddress: null,
  items: [
    {
      id: "3e8a1c5f-7d2b-4a9e-8c6f-1b4d7a2e9c05",
      productId: PRODUCT.burger,
      name: "Classic Burger",
      quantity: 2,
      unitPrice: 32.5,
      total: 75,
      notes: "No pickles",
      additionals: [{ name: "Bacon", quantity: 1, price: 5 }],
    },
    {
      id: "5b9d3f7a-1e4c-4b8a-9d2f-6c0e8a4b2d71",
      productId: PRODUCT.pepperoni,
      name: "Pepperoni",
      quantity: 1,
      unitPrice: 49.9,
      total: 49.9,
      notes: null,
      additionals: [],
    },
  ],
  payments: [{ method: "CASH", status: "PENDING", value: 124.9, changeFor: 150 }],
  version: 1,
  createdAt: "2025-03-01T19:02:44.310Z",
  updatedAt: "2025-03-01T19:02:44.310Z",
  couponCode: null,
  statusHistory: [{ status: "PENDING", at: "2025-03-01T19:02:44.310Z", reason: null }],
  scheduledFor: "2025-03-01T19:45:00.000Z",
  notes: null,
  cancellationReason: null,
};

const CUSTOMER = {
  id: CUSTOMER_ID,
  name: "Ana Souza",
  phone: "+55 11 91234-5678",
  email: "ana.souza@example.com",
  createdAt: T.customer,
  updatedAt: T.customer,
};
const NEW_CUSTOMER = {
  id: NEW_CUSTOMER_ID,
  name: "Marcos Pereira",
  phone: "+55 11 97777-1234",
  email: "marcos.pereira@example.com",
  createdAt: "2025-03-01T19:02:44.310Z",
  updatedAt: "2025-03-01T19:02:44.310Z",
};

const MARGHERITA = {
  id: PRODUCT.margherita,
  name: "Margherita",
  description: "Tomato, mozzarella and basil",
  price: 42.9,
  image: "https://images.example.com/products/margherita.jpg",
  categoryId: CATEGORY.pizzas,
  isActive: true,
};
const PEPPERONI = {
  id: PRODUCT.pepperoni,
  name: "Pepperoni",
  description: "Pepperoni and mozzarella",
  price: 49.9,
  image: "https://images.example.com/products/pepperoni.jpg",
  categoryId: CATEGORY.pizzas,
  isActive: true,
};

const ENDPOINT = {
  id: ENDPOINT_ID,
  url: WEBHOOK_URL,
  events: ["order.created", "order.cancelled"],
  status: "ACTIVE",
  secretPrefix: SECRET_PREFIX,
  lastSuccessAt: "2025-03-01T18:30:01.152Z",
  failureCount: 0,
  disabledReason: null,
  rateLimit: 50,
  apiVersion: "2026-12-01",
  deliveriesLast24h: { delivered: 41, failed: 1, pending: 0, successRate: 0.9762 },
  drill: null,
};

/** A fault drill a SANDBOX endpoint runs (extension to the contract). */
const DRILL = { duplicateRate: 0.2, reorderWindowSeconds: 10, maxDelaySeconds: 30 };

const DELIVERY = {
  id: DELIVERY_ID,
  eventId: EVENT_ID,
  eventType: "order.created",
  tenantId: STORE_CODE,
  status: "DELIVERED",
  httpStatus: 200,
  attempts: 1,
  lastAttemptAt: T.delivered,
  nextAttemptAt: null,
  lastError: null,
  requestDurationMs: 84,
  endpointId: ENDPOINT_ID,
};

const DEAD_DELIVERY = {
  ...DELIVERY,
  status: "DEAD_LETTER",
  httpStatus: 503,
  attempts: 10,
  lastAttemptAt: "2025-03-02T22:31:07.905Z",
  lastError: "HTTP 503 from the receiver",
  requestDurationMs: 212,
};

/** Event `data` of every delivered type, as the webhook bodies and the feed carry it. */
export const EVENT_DATA: { [K in EventType]: EventData<K> } & { "webhook.test": TestEventData } = {
  "order.created": { orderId: ORDER_ID, orderNumber: 1042, total: 129.8, type: "DELIVERY", status: "PENDING", version: 1 },
  "order.confirmed": { orderId: ORDER_ID, status: "CONFIRMED", version: 2 },
  "order.preparing": { orderId: ORDER_ID, status: "PREPARING", version: 3 },
  "order.ready": { orderId: ORDER_ID, status: "READY", version: 4 },
  "order.dispatched": { orderId: ORDER_ID, status: "DISPATCHED", version: 5 },
  "order.delivered": { orderId: ORDER_ID, status: "DELIVERED", version: 6 },
  "order.cancelled": { orderId: PICKUP_ORDER_ID, status: "CANCELLED", version: 2, reason: "Customer called to cancel" },
  "order.completed": { orderId: ORDER_ID, status: "DELIVERED", version: 6 },
  "customer.created": { customerId: NEW_CUSTOMER_ID, name: "Marcos Pereira", phone: "+55 11 97777-1234" },
  "customer.updated": { customerId: CUSTOMER_ID, name: "Ana Souza", phone: "+55 11 91234-5678", email: "ana@souza.com.br", changed: ["email"] },
  "catalog.updated": { action: "product.paused", itemId: PRODUCT.pepperoni, itemType: "product" },
  "store.updated": { storeId: STORE_ID, changed: ["status"] },
  "webhook.endpoint.failed": { endpointId: ENDPOINT_ID, url: WEBHOOK_URL, reason: "A delivery ran out of its 10 attempts: HTTP 503 from the receiver" },
  "webhook.endpoint.disabled": { endpointId: ENDPOINT_ID, url: WEBHOOK_URL, reason: "The receiver answered 410 Gone" },
  "webhook.delivery.dead_lettered": {
    endpointId: ENDPOINT_ID,
    url: WEBHOOK_URL,
    reason: "10 attempts failed; the last: HTTP 503 from the receiver",
    deliveryId: DELIVERY_ID,
    eventId: EVENT_ID,
    eventType: "order.created",
  },
  "webhook.test": { message: "This is a test event from PartnerWebhooks: your endpoint is reachable and can verify our signature." },
};

/** The envelope of an event of the examples' store (webhook body and feed entry). */
export function envelope(type: keyof typeof EVENT_DATA, sequence: number, eventId: string, timestamp: string) {
  return { eventId, eventType: type, timestamp, tenantId: STORE_CODE, sequence, data: EVENT_DATA[type] };
}

const isExampleEvent = (type: string): type is keyof typeof EVENT_DATA => Object.hasOwn(EVENT_DATA, type);

/** The body of a webhook of this type, the n-th event of the examples' store; undefined for a type without data here. */
export function eventExample(type: string, sequence: number) {
  if (!isExampleEvent(type)) return undefined;
  return envelope(type, sequence, `9b1f${String(sequence).padStart(4, "0")}-4c2a-4e7d-8f3b-6a1d9e5c7b20`, "2025-03-01T18:30:00.012Z");
}

const CREATED_EVENT = envelope("order.created", 41, EVENT_ID, "2025-03-01T18:30:00.012Z");

const page = (data: unknown[], next: string | null) => ({ data, pagination: { hasMore: next !== null, nextCursor: next } });
const one = (summary: string, value: unknown): Record<string, Example> => ({ default: { summary, value } });
const notFound = (what: string, path: string, id: string): ProblemExample => ({
  summary: `No ${what} with this id in the token's store`,
  code: "NOT_FOUND",
  detail: `No ${what} with id ${id} exists for this store. Check the id; resources of other stores are never visible.`,
  instance: path.replace(/\{\w+\}/, id),
});
const PRIVATE_HOST = `"erp.internal.example" resolves to 10.0.0.12, which is a private address. ${LOCAL_RECEIVER_ADVICE}`;
const UNKNOWN_ID = "0b6c3c8e-6f3e-4a5e-9d57-2f1c1c9a4b10";
/** An order naming a product the store's catalog does not have, at `field` of the body sent to `path`. */
const unknownProduct = (summary: string, path: string, field: string): ProblemExample => ({
  summary,
  code: "UNPROCESSABLE_ENTITY",
  detail: `The order cannot be registered: no product ${UNKNOWN_ID} in this store's catalog.`,
  instance: path,
  errors: [{ field, code: "UNKNOWN_PRODUCT", message: `no product ${UNKNOWN_ID} in this store's catalog` }],
});
const APPLICATION = {
  clientId: "sbx_Jx2mQ8vN4kLp7Rt",
  name: "Acme ERP",
  environment: "SANDBOX",
  scopes: ["orders:read", "orders:write", "webhooks:manage"],
  apiVersion: LATEST_API_VERSION,
};

/** The pizzeria's example access token (a JWT of the documented shape). */
const ACCESS_TOKEN =
  "eyJhbGciOiJFZERTQSIsImtpZCI6ImtfMjAyNV8wMyIsInR5cCI6ImF0K2p3dCJ9.eyJ0ZW5hbnRfaWQiOiJQWjdLMk05UVhBIiwiZW52aXJvbm1lbnQiOiJTQU5EQk9YIn0.QLnIFalKrqfBsdRfS0958Il3fC0Qhz9a3VJUUwgd7ldXRz79aI6kYvdv2eqU2aegX22X6wP30zfzwa010--yCw";

const BEARER_MISSING_APPLICATION: ProblemExample = {
  summary: "No bearer token",
  code: "UNAUTHORIZED",
  detail: "This route needs an access token: send Authorization: Bearer <access_token> (get one at POST /partner/auth/token).",
  instance: "/public/v1/application",
};

const BEARER_MISSING: ProblemExample = {
  summary: "No bearer token",
  code: "UNAUTHORIZED",
  detail: "This route needs an access token: send Authorization: Bearer <access_token> (get one at POST /partner/auth/token).",
  instance: "/public/v1/store",
};

export const OPERATION_EXAMPLES: Record<string, OperationExamples> = {
  createToken: {
    request: {
      default: {
        summary: "Client credentials in the body",
        value: { grant_type: "client_credentials", client_id: "sbx_3kP9wQ2mVtR7xYc1", client_secret: "cs_live_2Jx8Qm4Vb7Tn1Lp5Zr9Wd3Hs6Kf0Gy" },
      },
      severalStores: {
        summary: "An Application granted on several stores names the store",
        value: {
          grant_type: "client_credentials",
          client_id: "sbx_3kP9wQ2mVtR7xYc1",
          client_secret: "cs_live_2Jx8Qm4Vb7Tn1Lp5Zr9Wd3Hs6Kf0Gy",
          tenant_id: STORE_CODE,
        },
      },
    },
    response: one("A SANDBOX token for the pizzeria", {
      access_token: ACCESS_TOKEN,
      token_type: "Bearer",
      expires_in: 3600,
      scope: "orders:read orders:write customers:read catalog:read merchant:read webhooks:manage",
      tenant_id: STORE_CODE,
      environment: "SANDBOX",
    }),
    problem: {
      summary: "Wrong client_secret",
      code: "INVALID_CLIENT",
      detail: "Unknown client_id or wrong client_secret.",
      instance: "/partner/auth/token",
      error: "invalid_client",
    },
  },
  revokeToken: {
    request: {
      default: {
        summary: "Client credentials in the body",
        value: {
          token: ACCESS_TOKEN,
          token_type_hint: "access_token",
          client_id: "sbx_3kP9wQ2mVtR7xYc1",
          client_secret: "cs_live_2Jx8Qm4Vb7Tn1Lp5Zr9Wd3Hs6Kf0Gy",
        },
      },
      bearer: { summary: "The token itself also in Authorization: Bearer", value: { token: ACCESS_TOKEN } },
    },
    response: one("Revoked, or nothing to revoke", {}),
    problem: {
      summary: "A post from another website's page",
      code: "FORBIDDEN",
      detail: "Cross-site browser requests are refused here: call this endpoint from a server, or from a page of this site.",
      instance: "/partner/auth/revoke",
      errors: [{ field: "Sec-Fetch-Site", code: "CROSS_SITE", message: "`Sec-Fetch-Site` must not be cross-site" }],
      error: "invalid_request",
    },
  },
  exchangePortalLink: {
    request: one("The secret from the link's fragment", { link_secret: "Jq3xv8Tn0bK5yWm2Lr7Pz4Hc9Fd1Sg6Ae3Ut8Vo2Ni" }),
    response: one("A SANDBOX token for the link's Application and store", {
      access_token: ACCESS_TOKEN,
      token_type: "Bearer",
      expires_in: 3600,
      scope: "orders:read customers:read catalog:read merchant:read webhooks:manage",
      tenant_id: STORE_CODE,
      environment: "SANDBOX",
    }),
    problem: {
      summary: "A link used before",
      code: "INVALID_TOKEN",
      detail:
        "This portal link was already used at 2025-03-01T18:30:00.012Z; a link signs in once. Ask the platform team for a new portal link, or sign in with the Application's client_id and client_secret.",
      instance: "/partner/auth/portal-link",
      error: "invalid_grant",
    },
  },
  getJwks: {
    response: one("The one active signing key", {
      keys: [{ kty: "OKP", crv: "Ed25519", x: "GymIuw0R4gURQts_frOl4ClyHXzovySg6bVIzPA0diU", kid: "k_2025_03", alg: "EdDSA", use: "sig" }],
    }),
    problem: {
      summary: "An unexpected failure",
      code: "INTERNAL_SERVER_ERROR",
      detail: "Something went wrong on our side. Retry with backoff; if it persists, quote traceId 672f8864d2274d3b9f11ac4db44e7ee1 to support.",
      instance: "/.well-known/jwks.json",
    },
  },
  getAuthorizationServerMetadata: {
    response: one("The service at https://api.example.com", {
      issuer: "https://api.example.com",
      token_endpoint: "https://api.example.com/partner/auth/token",
      jwks_uri: "https://api.example.com/.well-known/jwks.json",
      revocation_endpoint: "https://api.example.com/partner/auth/revoke",
      grant_types_supported: ["client_credentials"],
      response_types_supported: [],
      token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
      revocation_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
      scopes_supported: [...SCOPES],
      service_documentation: "https://api.example.com/docs",
    }),
    problem: {
      summary: "An unexpected failure",
      code: "INTERNAL_SERVER_ERROR",
      detail: "Something went wrong on our side. Retry with backoff; if it persists, quote traceId 672f8864d2274d3b9f11ac4db44e7ee1 to support.",
      instance: "/.well-known/oauth-authorization-server",
    },
  },
  getOpenApiDocument: {
    response: one("This document (abridged)", { openapi: "3.1.0", info: { title: "Partner Platform API", version: LATEST_API_VERSION }, paths: {} }),
    problem: {
      summary: "An unexpected failure",
      code: "INTERNAL_SERVER_ERROR",
      detail: "Something went wrong on our side. Retry with backoff; if it persists, quote traceId 672f8864d2274d3b9f11ac4db44e7ee1 to support.",
      instance: "/public/v1/openapi.json",
    },
  },
  listApiVersions: {
    response: one("Two versions, the older one deprecated", {
      data: versionList({ [FIRST_API_VERSION]: { deprecatedAt: new Date("2027-01-15T00:00:00Z"), sunsetAt: new Date("2027-07-15T00:00:00Z") } }),
      latest: LATEST_API_VERSION,
    }),
    problem: {
      summary: "An unexpected failure",
      code: "INTERNAL_SERVER_ERROR",
      detail: "Something went wrong on our side. Retry with backoff; if it persists, quote traceId 672f8864d2274d3b9f11ac4db44e7ee1 to support.",
      instance: "/public/v1/versions",
    },
  },
  getApplication: {
    response: one("An ERP's sandbox Application", APPLICATION),
    problem: BEARER_MISSING_APPLICATION,
  },
  updateApplication: {
    request: one("Move to the latest version", { apiVersion: LATEST_API_VERSION }),
    response: one("The Application, now on the latest version", APPLICATION),
    problem: {
      summary: "A version that does not exist",
      code: "INVALID_API_VERSION",
      detail: `"2026-13-01" is not an API version. Known versions: ${API_VERSIONS.join(", ")} (latest ${LATEST_API_VERSION}).`,
      instance: "/public/v1/application",
      errors: [
        { field: "apiVersion", code: "INVALID_API_VERSION", message: `\`apiVersion\` must be one of ${API_VERSIONS.join(", ")}`, known: [...API_VERSIONS] },
      ],
    },
  },
  getStore: {
    response: one("An open pizzeria", STORE),
    problem: BEARER_MISSING,
  },
  listOrders: {
    response: one("The newest order, with more to read", page([ORDER], ORDER_ID)),
    problem: {
      summary: "A status that is not a filter value",
      code: "INVALID_REQUEST",
      detail: "The query parameters failed validation: `status` must be one of: PENDING, CONFIRMED, PREPARING, READY, DISPATCHED, DELIVERED, CANCELLED.",
      instance: "/public/v1/orders",
      errors: [
        {
          field: "status",
          code: "INVALID_VALUE",
          message: "`status` must be one of: PENDING, CONFIRMED, PREPARING, READY, DISPATCHED, DELIVERED, CANCELLED",
          allowed: ["PENDING", "CONFIRMED", "PREPARING", "READY", "DISPATCHED", "DELIVERED", "CANCELLED"],
        },
      ],
    },
  },
  createOrder: {
    request: {
      existingCustomer: {
        summary: "Delivery for an existing customer (customerId)",
        value: {
          type: "DELIVERY",
          customerId: CUSTOMER_ID,
          items: [
            { productId: PRODUCT.margherita, quantity: 1, notes: "Well done, please", additionals: [{ name: "Stuffed crust", quantity: 1 }] },
            { productId: PRODUCT.pepperoni, quantity: 1, additionals: [{ name: "Extra cheese", quantity: 1 }] },
            { productId: PRODUCT.cola, quantity: 2 },
          ],
          deliveryAddress: ADDRESS,
          payments: [{ method: "CREDIT_CARD", value: 129.8 }],
          notes: "Ring the bell twice",
        },
      },
      newCustomer: {
        summary: "Scheduled pickup for a new customer (customer), paid in cash",
        value: {
          type: "PICKUP",
          customer: { name: "Marcos Pereira", phone: "+55 11 97777-1234", email: "marcos.pereira@example.com" },
          items: [
            { productId: PRODUCT.burger, quantity: 2, notes: "No pickles", additionals: [{ name: "Bacon", quantity: 1 }] },
            { productId: PRODUCT.pepperoni, quantity: 1 },
          ],
          payments: [{ method: "CASH", value: 124.9, changeFor: 150 }],
          scheduledFor: "2025-03-01T19:45:00.000Z",
        },
      },
    },
    response: {
      existingCustomer: { summary: "The delivery order registered (existingCustomer)", value: ORDER_DETAIL },
      newCustomer: { summary: "The pickup order registered, with its new customer (newCustomer)", value: PICKUP_DETAIL },
    },
    problem: unknownProduct("A product the catalog does not have", "/public/v1/orders", "items[0].productId"),
  },
  getOrderById: {
    response: one("A delivery order waiting for confirmation", ORDER_DETAIL),
    problem: notFound("order", "/public/v1/orders/{id}", UNKNOWN_ID),
  },
  updateOrderStatus: {
    request: {
      confirm: { summary: "Confirm and send to the kitchen", value: { status: "CONFIRMED" } },
      cancel: { summary: "Cancel (a reason is required)", value: { status: "CANCELLED", reason: "Out of mozzarella" } },
    },
    response: one("The order, now CONFIRMED", CONFIRMED_DETAIL),
    problem: {
      summary: "A move the lifecycle does not allow",
      code: "UNPROCESSABLE_ENTITY",
      detail: "A DELIVERY order cannot go from CONFIRMED to DELIVERED; next allowed: PREPARING, READY, CANCELLED.",
      instance: `/public/v1/orders/${ORDER_ID}/status`,
      errors: [
        {
          field: "status",
          code: "INVALID_TRANSITION",
          message: "A DELIVERY order cannot go from CONFIRMED to DELIVERED; next allowed: PREPARING, READY, CANCELLED.",
          from: "CONFIRMED",
          to: "DELIVERED",
        },
      ],
    },
  },
  listCustomers: {
    response: one("One customer, with more to read", page([CUSTOMER], CUSTOMER_ID)),
    problem: {
      summary: "A limit out of range",
      code: "INVALID_REQUEST",
      detail: "The query parameters failed validation: `limit` must be at most 100.",
      instance: "/public/v1/customers",
      errors: [{ field: "limit", code: "OUT_OF_RANGE", message: "`limit` must be at most 100" }],
    },
  },
  createCustomer: {
    request: one("A new customer", { name: "Marcos Pereira", phone: "+55 11 97777-1234", email: "marcos.pereira@example.com" }),
    response: one("The customer created", NEW_CUSTOMER),
    problem: {
      summary: "A missing name",
      code: "INVALID_REQUEST",
      detail: "The request body failed validation: `name` is required.",
      instance: "/public/v1/customers",
      errors: [{ field: "name", code: "REQUIRED", message: "`name` is required" }],
    },
  },
  getCustomerById: {
    response: one("A regular customer", {
      ...CUSTOMER,
      deliveryAddresses: [{ id: ADDRESS_ID, ...ADDRESS }],
      contactSummary: { orderCount: 12, firstOrderAt: "2024-11-09T20:14:05.000Z", lastOrderAt: T.created },
    }),
    problem: notFound("customer", "/public/v1/customers/{id}", UNKNOWN_ID),
  },
  updateCustomer: {
    request: {
      email: { summary: "Change the email", value: { email: "ana@souza.com.br" } },
      clearPhone: { summary: "Clear the phone", value: { phone: null } },
    },
    response: one("The customer with the new email", { ...CUSTOMER, email: "ana@souza.com.br", updatedAt: "2025-03-02T10:05:31.000Z" }),
    problem: notFound("customer", "/public/v1/customers/{id}", UNKNOWN_ID),
  },
  listCategories: {
    response: one("The menu's sections in display order", {
      data: [
        { id: CATEGORY.pizzas, name: "Pizzas", position: 1 },
        { id: CATEGORY.burgers, name: "Burgers", position: 2 },
        { id: CATEGORY.drinks, name: "Drinks", position: 3 },
      ],
    }),
    problem: {
      summary: "A token without catalog:read",
      code: "INSUFFICIENT_SCOPE",
      detail:
        'This operation needs the scope "catalog:read", which the token does not carry. Ask the store to grant it to your Application, then request a new token.',
      instance: "/public/v1/catalog/categories",
    },
  },
  listProducts: {
    response: one("Two products, with more to read", page([MARGHERITA, PEPPERONI], PRODUCT.pepperoni)),
    problem: {
      summary: "A page size of zero",
      code: "INVALID_REQUEST",
      detail: "The query parameters failed validation: `limit` must be at least 1.",
      instance: "/public/v1/catalog/products",
      errors: [{ field: "limit", code: "OUT_OF_RANGE", message: "`limit` must be at least 1" }],
    },
  },
  getProductById: {
    response: one("A pizza in two sizes, with extras", {
      ...MARGHERITA,
      variations: [
        { id: "3008470a-3711-42e6-999e-cf4bb6e78944", name: "Medium", price: 42.9, isAvailable: true, position: 0 },
        { id: "41f0ccac-ba34-41a1-8303-2dcc66f8c3af", name: "Large", price: 54.9, isAvailable: true, position: 1 },
      ],
      additionals: [
        { id: "b250dae2-9dd4-4be6-8c07-401b39886371", name: "Extra cheese", price: 6.5, minChoices: 0, maxChoices: 2, isAvailable: true, position: 0 },
        { id: "6f8f6684-323b-412d-8b64-1e61dea2501c", name: "Stuffed crust", price: 9, minChoices: 0, maxChoices: 1, isAvailable: true, position: 1 },
      ],
    }),
    problem: notFound("product", "/public/v1/catalog/products/{id}", UNKNOWN_ID),
  },
  setProductStatus: {
    request: {
      pause: { summary: "Pause (sold out tonight)", value: { isActive: false } },
      resume: { summary: "Resume", value: { isActive: true } },
    },
    response: one("The product, paused", { ...PEPPERONI, isActive: false }),
    problem: notFound("product", "/public/v1/catalog/products/{id}", UNKNOWN_ID),
  },
  seedSandbox: {
    response: one("The sandbox store's fake catalog and customers", { storeId: STORE_ID, categories: 3, products: 6, customers: 3 }),
    problem: {
      summary: "A PRODUCTION token",
      code: "FORBIDDEN",
      detail: "Sandbox operations answer SANDBOX tokens only: use your sandbox credentials.",
      instance: "/public/v1/sandbox/seed",
    },
  },
  createSandboxOrder: {
    request: {
      delivery: { summary: "A delivery order with fee and full address", value: { scenario: "delivery" } },
      overrides: {
        summary: "A cash order with your own items and customer",
        value: {
          scenario: "cash",
          overrides: {
            items: [{ productId: PRODUCT.burger, quantity: 2, notes: "No pickles", additionals: [{ name: "Bacon", quantity: 1 }] }],
            customer: { name: "Marcos Pereira", phone: "+55 11 97777-1234" },
            deliveryFee: 7.9,
          },
        },
      },
      simulate: {
        summary: "A delivery order that then moves on its own, a status every 10 seconds, until DELIVERED",
        value: { scenario: "delivery", simulate: { until: "DELIVERED", stepSeconds: 10 } },
      },
    },
    response: one("The delivery scenario's order", ORDER_DETAIL),
    problem: unknownProduct("An override naming a product the catalog does not have", "/public/v1/sandbox/orders", "overrides.items[0].productId"),
  },
  fireSandboxEvent: {
    request: one("Fire a store.updated event", { type: "store.updated" }),
    response: one(
      "The event recorded, as the feed shows it",
      envelope("store.updated", 57, "2e6e3545-750b-4d1e-a654-da4823a86179", "2025-03-01T18:40:12.481Z"),
    ),
    otherResponses: {
      202: one("catalog.updated: the product paused, its event follows when the window closes", {
        action: "product.paused",
        itemId: PRODUCT.cola,
        itemType: "product",
      }),
    },
    problem: {
      summary: "An event type that does not exist",
      code: "INVALID_REQUEST",
      detail: `The request body failed validation: \`type\` must be one of: ${SANDBOX_EVENT_TYPES.join(", ")}.`,
      instance: "/public/v1/sandbox/events",
      errors: [
        { field: "type", code: "INVALID_VALUE", message: `\`type\` must be one of: ${SANDBOX_EVENT_TYPES.join(", ")}`, allowed: [...SANDBOX_EVENT_TYPES] },
      ],
    },
  },
  createWebhookEndpoint: {
    request: one("Orders created and cancelled, to the ERP", { url: WEBHOOK_URL, events: ["order.created", "order.cancelled"] }),
    response: one("The endpoint, with its secret (shown only here)", {
      id: ENDPOINT_ID,
      url: WEBHOOK_URL,
      events: ["order.created", "order.cancelled"],
      rateLimit: 50,
      apiVersion: "2026-12-01",
      secret: "whsec_5oaG0P2uqqa0W7Hibi/wMVhXNjVkHMYveywSVc1zFio=",
      secretPrefix: SECRET_PREFIX,
      message: "Store the secret now: it is shown only once. Verify the X-Service-Signature header of every delivery with it.",
    }),
    problem: {
      summary: "A receiver on a private network",
      code: "UNPROCESSABLE_ENTITY",
      detail: PRIVATE_HOST,
      instance: "/public/v1/webhooks",
      errors: [{ field: "url", code: "PRIVATE_NETWORK", message: PRIVATE_HOST }],
    },
  },
  listWebhookEndpoints: {
    response: one("The Application's one endpoint", page([ENDPOINT], null)),
    problem: {
      summary: "A token without webhooks:manage",
      code: "INSUFFICIENT_SCOPE",
      detail:
        'This operation needs the scope "webhooks:manage", which the token does not carry. Ask the store to grant it to your Application, then request a new token.',
      instance: "/public/v1/webhooks",
    },
  },
  getWebhookEndpointById: {
    response: one("A healthy endpoint", ENDPOINT),
    problem: notFound("webhook endpoint", "/public/v1/webhooks/{id}", UNKNOWN_ID),
  },
  updateWebhookEndpoint: {
    request: {
      pause: { summary: "Stop deliveries for a while", value: { status: "INACTIVE" } },
      pace: { summary: "At most 10 deliveries a second (extension to the contract)", value: { rateLimit: 10 } },
      drill: {
        summary: "Rehearse duplicates, reordering and delays on a SANDBOX endpoint (extension to the contract)",
        value: { drill: DRILL },
      },
      endDrill: { summary: "End the fault drill (extension to the contract)", value: { drill: null } },
      events: {
        summary: "Subscribe to the whole order lifecycle",
        value: { events: ["order.created", "order.confirmed", "order.ready", "order.dispatched", "order.delivered", "order.cancelled"] },
      },
    },
    response: one("The endpoint, paused", { ...ENDPOINT, status: "INACTIVE", disabledReason: "Set INACTIVE on request." }),
    problem: notFound("webhook endpoint", "/public/v1/webhooks/{id}", UNKNOWN_ID),
  },
  deleteWebhookEndpoint: {
    problem: notFound("webhook endpoint", "/public/v1/webhooks/{id}", UNKNOWN_ID),
  },
  testWebhookEndpoint: {
    response: one("The webhook.test delivery, acknowledged", {
      ...DELIVERY,
      id: "e3f1a7c9-5b2d-4e8f-a6c0-9d4b2f8e1a37",
      eventId: "d1fecada-c4e8-4052-9070-a253a2acc87f",
      eventType: "webhook.test",
      requestDurationMs: 13,
    }),
    problem: notFound("webhook endpoint", "/public/v1/webhooks/{id}/test", UNKNOWN_ID),
  },
  rotateWebhookEndpointSecret: {
    response: one("The new secret (shown only here)", {
      id: ENDPOINT_ID,
      secret: "whsec_QFyqSeqcRg6Z8N4aKqhMBEzDS78j1NlbS+Y6v4wO+6g=",
      secretPrefix: "whsec_QFyqSe",
      previousSecretExpiresAt: "2025-03-02T18:45:00.000Z",
      message:
        "Store the new secret now: it is shown only once. Until 2025-03-02T18:45:00.000Z deliveries carry a v1 signature for the new and for the previous secret.",
    }),
    problem: notFound("webhook endpoint", "/public/v1/webhooks/{id}/rotate-secret", UNKNOWN_ID),
  },
  recoverWebhookDeliveries: {
    request: one("What failed during last night's outage", { since: "2025-03-01T23:00:00.000Z", until: "2025-03-02T07:00:00.000Z" }),
    response: one("The first 100 deliveries of a long outage queued again (two past retention passed over): call again for the rest", {
      count: 100,
      hasMore: true,
      expired: 2,
    }),
    problem: {
      summary: "A window that ends before it starts",
      code: "INVALID_REQUEST",
      detail: "since must be before until (or before now when until is omitted).",
      instance: `/public/v1/webhooks/${ENDPOINT_ID}/recover`,
      errors: [{ field: "since", code: "OUT_OF_RANGE", message: "`since` must be before `until`" }],
    },
  },
  backfillWebhookEndpoint: {
    request: one("Everything after the last event the receiver applied", { afterSequence: 1040 }),
    response: one("The first 100 subscribed events queued: call again with afterSequence 1187 for the rest", {
      count: 100,
      hasMore: true,
      nextAfterSequence: 1187,
    }),
    problem: {
      summary: "A sequence past the store's latest event",
      code: "INVALID_REQUEST",
      detail: "afterSequence is 99999, past this store's latest event (sequence 1187).",
      instance: `/public/v1/webhooks/${ENDPOINT_ID}/backfill`,
      errors: [{ field: "afterSequence", code: "OUT_OF_RANGE", message: "`afterSequence` is past this store's latest event (sequence 1187)" }],
    },
  },
  listWebhookDeliveries: {
    response: one("The newest delivery", page([DELIVERY], null)),
    problem: {
      summary: "A status that is not a delivery status",
      code: "INVALID_REQUEST",
      detail: "The query parameters failed validation: `status` must be one of: PENDING, DELIVERED, FAILED, DEAD_LETTER.",
      instance: "/public/v1/webhooks/deliveries",
      errors: [
        {
          field: "status",
          code: "INVALID_VALUE",
          message: "`status` must be one of: PENDING, DELIVERED, FAILED, DEAD_LETTER",
          allowed: ["PENDING", "DELIVERED", "FAILED", "DEAD_LETTER"],
        },
      ],
    },
  },
  getWebhookDeliveryById: {
    response: one("A delivered order.created, with the body it sent", { ...DELIVERY, payload: CREATED_EVENT }),
    problem: notFound("delivery", "/public/v1/webhooks/deliveries/{deliveryId}", UNKNOWN_ID),
  },
  listWebhookDeliveryAttempts: {
    response: one("One scheduled attempt, acknowledged", {
      data: [
        {
          attempt: 1,
          trigger: "SCHEDULED",
          startedAt: "2025-03-01T18:30:01.068Z",
          durationMs: 84,
          httpStatus: 200,
          error: null,
          requestHeaders: {
            "Content-Type": "application/json",
            "User-Agent": "PartnerWebhooks/1.0",
            "X-Service-Signature": "t=1740853801,v1=fdcc6ba8b6d4375ab98a47c2a0790c9670f8354815f9b22607cc26751dcb5934",
            "X-Service-Event-Id": EVENT_ID,
            "X-Service-Event-Type": "order.created",
            "X-Service-Delivery-Id": DELIVERY_ID,
            "Api-Version": FIRST_API_VERSION,
            "webhook-id": EVENT_ID,
            "webhook-timestamp": "1740853801",
            "webhook-signature": "v1,bssJpIc7a0tSikhstjbBRZOovcHNVt0v/RryV8+mDLI=",
          },
          responseBody: '{"received":true}',
          drill: null,
        },
      ],
    }),
    problem: notFound("delivery", "/public/v1/webhooks/deliveries/{deliveryId}/attempts", UNKNOWN_ID),
  },
  replayWebhookDelivery: {
    response: one("A dead-lettered delivery, queued again", { ...DEAD_DELIVERY, status: "PENDING", nextAttemptAt: "2025-03-03T09:12:00.000Z" }),
    problem: notFound("delivery", "/public/v1/webhooks/deliveries/{deliveryId}/replay", UNKNOWN_ID),
  },
  listEvents: {
    response: one("The store's events after sequence 40", {
      data: [
        CREATED_EVENT,
        envelope("order.confirmed", 42, "cdf31695-e328-4b55-a993-a89a3010f7b4", T.confirmed),
        envelope("customer.created", 43, "d888088d-acdb-42e0-8aa1-4ccab213d709", "2025-03-01T19:02:44.322Z"),
      ],
      pagination: { hasMore: true, nextCursor: "43" },
    }),
    problem: {
      summary: "An after that is not a sequence number",
      code: "INVALID_REQUEST",
      detail: "The query parameters failed validation: `after` must be a sequence number (1 to 16 digits).",
      instance: "/public/v1/events",
      errors: [{ field: "after", code: "INVALID_FORMAT", message: "`after` must be a sequence number (1 to 16 digits)" }],
    },
  },
  getEventById: {
    response: one("An order.created event", CREATED_EVENT),
    problem: notFound("event", "/public/v1/events/{eventId}", UNKNOWN_ID),
  },
};

/** One example per shared problem response, so every error status shows a realistic body. */
export const STATUS_PROBLEMS: Record<number, ProblemExample> = {
  400: {
    summary: "A body that fails validation",
    code: "INVALID_REQUEST",
    detail: "The request body failed validation: `items[0].quantity` must be at least 1.",
    instance: "/public/v1/orders",
    errors: [{ field: "items[0].quantity", code: "OUT_OF_RANGE", message: "`items[0].quantity` must be at least 1" }],
  },
  401: {
    summary: "An expired token",
    code: "INVALID_TOKEN",
    detail: "The access token has expired. Request a new one at POST /partner/auth/token.",
    instance: "/public/v1/orders",
  },
  403: {
    summary: "A token without the route's scope",
    code: "INSUFFICIENT_SCOPE",
    detail:
      'This operation needs the scope "orders:write", which the token does not carry. Ask the store to grant it to your Application, then request a new token.',
    instance: "/public/v1/orders",
  },
  404: notFound("order", "/public/v1/orders/{id}", UNKNOWN_ID),
  409: {
    summary: "An Idempotency-Key reused with another body",
    code: "IDEMPOTENCY_CONFLICT",
    detail: "This Idempotency-Key was already used with a different request. Use a new key for a new request.",
    instance: "/public/v1/orders",
  },
  413: { summary: "A body over the limit", code: "PAYLOAD_TOO_LARGE", detail: "Request bodies are limited to 1048576 bytes.", instance: "/public/v1/orders" },
  415: {
    summary: "A form body where JSON is expected",
    code: "UNSUPPORTED_MEDIA_TYPE",
    detail:
      "Send the body as JSON with Content-Type: application/json; it came as application/x-www-form-urlencoded (curl -d sends that unless you add -H 'content-type: application/json').",
    instance: "/public/v1/orders",
  },
  422: {
    summary: "A move the lifecycle does not allow",
    code: "UNPROCESSABLE_ENTITY",
    detail: "A PICKUP order cannot go from READY to DISPATCHED; next allowed: DELIVERED, CANCELLED.",
    instance: `/public/v1/orders/${PICKUP_ORDER_ID}/status`,
    errors: [
      {
        field: "status",
        code: "INVALID_TRANSITION",
        message: "A PICKUP order cannot go from READY to DISPATCHED; next allowed: DELIVERED, CANCELLED.",
        from: "READY",
        to: "DISPATCHED",
      },
    ],
  },
  429: {
    summary: "The store's limit reached",
    code: "RATE_LIMIT_EXCEEDED",
    detail: "The limit of 100 requests per minute for this store is reached. Retry after 12 s, backing off with jitter.",
    instance: "/public/v1/orders",
  },
  500: {
    summary: "An unexpected failure",
    code: "INTERNAL_SERVER_ERROR",
    detail: "Something went wrong on our side. Retry with backoff; if it persists, quote traceId 672f8864d2274d3b9f11ac4db44e7ee1 to support.",
    instance: "/public/v1/orders",
  },
  503: {
    summary: "The database is away",
    code: "SERVICE_UNAVAILABLE",
    detail: "The database is unreachable or not migrated yet.",
    instance: "/public/v1/orders",
  },
};
