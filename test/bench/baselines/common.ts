import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Customer, Order, OrderItem, OrderItemAdditional, OrderStatusHistory, Payment } from "../../../src/platform/db/prisma.js";
import { isUuid } from "../../../src/platform/uuid.js";

/**
 * An order in the REST response shape (the fields and field order the façade's GraphQL documents produce, so
 * responses compare byte for byte), for every baseline; and, for the bare ones, (a) and (b′), the tenant taken
 * from the bearer token, the two routes and a plain node:http server. The bare baselines deliberately skip what
 * the service adds around the query: signature verification, grant lookup, rate limiting, input validation,
 * request logs and metrics. Baseline (b) keeps all of that (prisma-route-server.ts).
 */

export type FullOrder = Order & {
  customer: Customer | null;
  items: (OrderItem & { additionals: OrderItemAdditional[] })[];
  payments: Payment[];
  statusHistory?: OrderStatusHistory[];
};

interface AddressJson {
  street: string;
  number: string;
  neighborhood: string;
  city: string;
  state: string;
  postalCode: string;
  complement?: string;
}

const money = (cents: number): number => cents / 100;

export function orderBody(o: FullOrder): Record<string, unknown> {
  const a = o.deliveryAddress as AddressJson | null;
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
    deliveryAddress: a
      ? {
          street: a.street,
          number: a.number,
          neighborhood: a.neighborhood,
          city: a.city,
          state: a.state,
          postalCode: a.postalCode,
          complement: a.complement ?? null,
        }
      : null,
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

/** The store of the token's `tenant_id` claim, read without verifying the signature (the baselines' shortcut). */
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

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

async function route(req: IncomingMessage, res: ServerResponse, source: OrderSource, stores: ReadonlyMap<string, string>): Promise<void> {
  const url = new URL(req.url ?? "/", "http://localhost");
  const storeId = tenantStoreId(req.headers.authorization, stores);
  if (!storeId) return send(res, 401, { code: "UNAUTHORIZED" });
  if (req.method === "GET" && url.pathname === "/public/v1/orders") {
    const limit = Number(url.searchParams.get("limit") ?? 20);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) return send(res, 400, { code: "INVALID_REQUEST" });
    return send(res, 200, pageBody(await source.list(storeId, limit + 1), limit));
  }
  const m = /^\/public\/v1\/orders\/([^/]+)$/.exec(url.pathname);
  if (req.method === "GET" && m && isUuid(m[1])) {
    const order = await source.detail(storeId, m[1]);
    return order ? send(res, 200, orderBody(order)) : send(res, 404, { code: "NOT_FOUND" });
  }
  send(res, 404, { code: "NOT_FOUND" });
}

/**
 * Serves the two routes on 127.0.0.1 (PORT, default any) and prints `{"msg":"listening","port":N}` like the API
 * does. SIGTERM closes the server and calls `close`.
 */
export async function serveBaseline(
  name: string,
  loadStores: () => Promise<Map<string, string>>,
  source: OrderSource,
  close: () => Promise<void>,
): Promise<void> {
  const stores = await loadStores();
  const server = createServer((req, res) => {
    route(req, res, source, stores).catch((err: unknown) => {
      process.stderr.write(`${name}: ${err instanceof Error ? err.stack : String(err)}\n`);
      if (!res.headersSent) send(res, 500, { code: "INTERNAL_SERVER_ERROR" });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;
  server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
    const address = server.address();
    process.stdout.write(`${JSON.stringify({ msg: "listening", name, port: typeof address === "object" && address ? address.port : 0 })}\n`);
  });
  process.on("SIGTERM", () => {
    server.closeAllConnections();
    server.close(() => void close().finally(() => process.exit(0)));
  });
}
