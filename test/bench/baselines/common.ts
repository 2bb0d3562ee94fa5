import { randomUUID } from "node:crypto";
import type { JWTPayload } from "jose";
import type { Customer, Environment, Order, OrderItem, OrderItemAdditional, OrderStatusHistory, Payment } from "../../../src/platform/db/prisma.js";
import { ApiError, forbidden, insufficientScope, invalidRequest } from "../../../src/platform/errors.js";
import { isUuid } from "../../../src/platform/uuid.js";
import { toProblem } from "../../../src/http/problem.js";
import { SIGNING_ALG } from "../../../src/platform/auth/keys.js";
import { TOKEN_AUDIENCE } from "../../../src/platform/auth/tokens.js";

/**
 * What the read baselines share: an order in the REST response shape (the fields and field order the façade's
 * GraphQL documents produce) mapped from Prisma rows, for (b) and the Fastify + Prisma peer; the token checks and
 * problem-details bodies of (a) and the peer; and the event feed baseline's token shortcut.
 */

export type FullOrder = Order & {
  customer: Customer | null;
  items: (OrderItem & { additionals: OrderItemAdditional[] })[];
  payments: Payment[];
  statusHistory?: OrderStatusHistory[];
};

export interface AddressJson {
  street: string;
  number: string;
  neighborhood: string;
  city: string;
  state: string;
  postalCode: string;
  complement?: string;
}

const money = (cents: number): number => cents / 100;

/** A delivery address as the API answers it (complement null when absent). */
export function addressBody(a: AddressJson | null): Record<string, unknown> | null {
  if (!a) return null;
  return {
    street: a.street,
    number: a.number,
    neighborhood: a.neighborhood,
    city: a.city,
    state: a.state,
    postalCode: a.postalCode,
    complement: a.complement ?? null,
  };
}

export function orderBody(o: FullOrder): Record<string, unknown> {
  const body: Record<string, unknown> = {
    id: o.id,
    displayId: String(o.orderNumber),
    orderNumber: o.orderNumber,
    status: o.status,
    type: o.type,
    subtotal: money(o.subtotalCents),
    deliveryFee: money(o.deliveryFeeCents),
    discount: money(o.discountCents),
    total: money(o.totalCents),
    totalAmount: money(o.totalCents),
    customer: o.customer ? { id: o.customer.id, name: o.customer.name, phone: o.customer.phone } : null,
    deliveryAddress: addressBody(o.deliveryAddress as AddressJson | null),
    items: o.items.map((i) => ({
      id: i.id,
      productId: i.productId,
      name: i.name,
      quantity: i.quantity,
      unitPrice: money(i.unitPriceCents),
      total: money(i.totalCents),
      notes: i.notes,
      additionals: i.additionals.map((x) => ({ name: x.name, quantity: x.quantity, price: money(x.priceCents) })),
    })),
    payments: o.payments.map((p) => ({
      method: p.method,
      status: p.status,
      value: money(p.valueCents),
      changeFor: p.changeForCents === null ? null : money(p.changeForCents),
    })),
    version: o.version,
    createdAt: o.createdAt.toISOString(),
    updatedAt: o.updatedAt.toISOString(),
  };
  if (o.statusHistory) {
    body.couponCode = o.couponCode;
    body.statusHistory = o.statusHistory.map((h) => ({ status: h.status, at: h.at.toISOString(), reason: h.reason }));
    body.scheduledFor = o.scheduledFor?.toISOString() ?? null;
    body.notes = o.notes;
    body.cancellationReason = o.cancellationReason;
  }
  return body;
}

/** The first page of a list, in the façade's `{ data, pagination }` shape. */
export function pageBody(rows: FullOrder[], limit: number): Record<string, unknown> {
  const hasMore = rows.length > limit;
  const data = hasMore ? rows.slice(0, limit) : rows;
  const last = hasMore ? data[data.length - 1].id : null;
  return { data: data.map(orderBody), pagination: { hasMore, cursor: last, nextCursor: last } };
}

/** The store of the token's `tenant_id` claim, read without verifying the signature (the feed baseline's shortcut). */
export function tenantStoreId(authorization: string | undefined, storeIdByCode: ReadonlyMap<string, string>): string | null {
  const token = authorization?.startsWith("Bearer ") ? authorization.slice(7) : "";
  const payload = token.split(".")[1];
  if (!payload) return null;
  try {
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { tenant_id?: unknown };
    return typeof claims.tenant_id === "string" ? (storeIdByCode.get(claims.tenant_id) ?? null) : null;
  } catch {
    return null;
  }
}

export interface OrderSource {
  /** limit + 1 newest orders of the store, with their relations. */
  list(storeId: string, take: number): Promise<FullOrder[]>;
  /** One order of the store with its status history, or null. */
  detail(storeId: string, id: string): Promise<FullOrder | null>;
}

/** What the read baselines check of a verified token, as the service does (src/platform/auth/tokens.ts). */
export const TOKEN_CHECKS = {
  algorithms: [SIGNING_ALG],
  audience: TOKEN_AUDIENCE,
  requiredClaims: ["sub", "tenant_id", "environment", "scope", "jti", "exp", "iat"],
};

/** Who a verified token speaks for, as far as the order reads need. */
export interface ReaderClaims {
  clientId: string;
  storeCode: string;
  environment: Environment;
}

/** The claims of a verified token, or the service's error: malformed claims (401) or no `orders:read` scope (403). */
export function orderReader(payload: JWTPayload): ReaderClaims | ApiError {
  const { sub, tenant_id, environment, scope } = payload;
  if (typeof sub !== "string" || typeof tenant_id !== "string" || typeof scope !== "string") return INVALID_TOKEN;
  if (environment !== "SANDBOX" && environment !== "PRODUCTION") return INVALID_TOKEN;
  return scope.split(" ").includes("orders:read") ? { clientId: sub, storeCode: tenant_id, environment } : insufficientScope("orders:read");
}

/** The bearer token of an Authorization header, or the service's 401 when there is none. */
export function bearer(authorization: string | undefined): string | ApiError {
  if (!authorization) return NO_TOKEN;
  return authorization.startsWith("Bearer ") ? authorization.slice(7) : INVALID_TOKEN;
}

/**
 * The service's problem-details body for an error, with the request id the client sent in `x-request-id` (a
 * fresh one otherwise), so the bench can compare error bodies in full.
 */
export function problemText(err: ApiError, baseUrl: string, path: string, requestIdHeader: string | string[] | undefined): { status: number; text: string } {
  const requestId = typeof requestIdHeader === "string" && isUuid(requestIdHeader) ? requestIdHeader : randomUUID();
  const { problem } = toProblem(err, { baseUrl, instance: path, requestId, traceId: requestId.replace(/-/g, "") });
  return { status: problem.status, text: JSON.stringify(problem) };
}

export const NO_TOKEN = new ApiError("UNAUTHORIZED", "This route needs an access token: send Authorization: Bearer <access_token>.");
export const INVALID_TOKEN = new ApiError("INVALID_TOKEN", "The access token is malformed, wrongly signed, expired or not issued by this service.");
export const NO_GRANT = forbidden("This token's Application holds no active grant on its store in its environment.");
export const NOT_SERVED = invalidRequest("This baseline serves GET /public/v1/orders?limit= (first pages) and GET /public/v1/orders/{id} only.");
