import { createServer, type ServerResponse } from "node:http";
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from "jose";
import pg from "pg";
import { ApiError, notFound } from "../../../src/platform/errors.js";
import { isUuid } from "../../../src/platform/uuid.js";
import { ADDRESS_FIELD_NAMES } from "../../../src/modules/store/address.js";
import {
  type AddressJson,
  addressBody,
  bearer,
  INVALID_TOKEN,
  NO_GRANT,
  NOT_SERVED,
  orderReader,
  problemText,
  TOKEN_CHECKS,
  type ReaderClaims,
} from "./common.js";

/**
 * Baseline (a): a careful bare handler for the two order reads, on node:http and pg. Per request it checks
 * - the bearer token: an EdDSA JWT verified with jose against the API's JWKS (fetched once at start): signature,
 *   algorithm, issuer, audience, expiry and the claims the service requires (401 otherwise, as without a token),
 *   then the `orders:read` scope (403); verified claims are kept until the token expires but at most a minute, as
 *   the service keeps them;
 * - the grant: the token's Application (`sub`) holds an ACTIVE grant on the token's store (`tenant_id`), the
 *   Application is ACTIVE, and the store and the Application belong to the token's environment; otherwise 403. It is
 *   kept 4 s per token subject, as the service keeps its grants (GRANT_CACHE_TTL_MS);
 * and answers the façade's bodies (problem details included, with the client's `x-request-id`). It does not rate
 * limit, log requests, keep metrics or accept the list's cursor and filters: the service's pipeline does all that.
 *
 * In steady state each request sends ONE prepared statement, the data's (named, so parsed once per connection, and
 * planned generically: `plan_cache_mode=force_generic_plan`), by the store's id, so the page is read from the
 * (storeId, createdAt desc, id desc) index, stopping after limit + 1 rows. The JSON is built by PostgreSQL
 * (`json_build_object`/`json_agg`, sent on as text) with BASELINE_JSON=sql, or in JS from compact rows (relations
 * as JSON arrays of values) with BASELINE_JSON=js; the bench times both and keeps the cheaper per route.
 *
 * Environment: DATABASE_URL, DB_POOL_SIZE, API_URL (for the JWKS), ISSUER (the tokens' `iss`, the API's
 * PUBLIC_BASE_URL, also the problems' base URL), BASELINE_JSON (sql or js).
 */

const mode = process.env.BASELINE_JSON === "js" ? "js" : "sql";
const issuer = process.env.ISSUER ?? "";
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DB_POOL_SIZE ?? 10),
  options: "-c plan_cache_mode=force_generic_plan",
});
const jwks = createLocalJWKSet((await (await fetch(`${process.env.API_URL}/.well-known/jwks.json`)).json()) as JSONWebKeySet);

// ---- SQL: the grant, and the order JSON

/**
 * $1 the token's store code, $2 its client id, $3 its environment: the store and whether the grant admits, or no
 * row. Kept per token subject for GRANT_CACHE_TTL_MS (4 s), as the service keeps its grants, so a request in steady
 * state sends only the data statement.
 */
const GRANT_SQL = `SELECT s.id AS "storeId",
    (g.status = 'ACTIVE' AND a.status = 'ACTIVE' AND a.environment::text = $3 AND s.environment::text = $3) AS admitted
  FROM "Application" a JOIN "Grant" g ON g."applicationId" = a.id JOIN "Store" s ON s.id = g."storeId"
  WHERE a."clientId" = $2 AND s.code = $1`;
const GRANT_TTL_MS = 4_000;

const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const money = (column: string) => `(${column}::float8 / 100)`;

const ADDITIONALS_JSON = `(SELECT coalesce(json_agg(json_build_object('name', x.name, 'quantity', x.quantity, 'price', ${money('x."priceCents"')})
    ORDER BY x.name, x.id), '[]') FROM "OrderItemAdditional" x WHERE x."orderItemId" = i.id)`;
const ITEMS_JSON = `(SELECT coalesce(json_agg(json_build_object('id', i.id, 'productId', i."productId", 'name', i.name, 'quantity', i.quantity,
    'unitPrice', ${money('i."unitPriceCents"')}, 'total', ${money('i."totalCents"')}, 'notes', i.notes, 'additionals', ${ADDITIONALS_JSON})
    ORDER BY i.position, i.id), '[]') FROM "OrderItem" i WHERE i."orderId" = o.id)`;
const PAYMENTS_JSON = `(SELECT coalesce(json_agg(json_build_object('method', p.method, 'status', p.status, 'value', ${money('p."valueCents"')},
    'changeFor', ${money('p."changeForCents"')}) ORDER BY p.id), '[]') FROM "Payment" p WHERE p."orderId" = o.id)`;
const ADDRESS_JSON = `CASE WHEN o."deliveryAddress" IS NOT NULL THEN json_build_object(${ADDRESS_FIELD_NAMES.map(
  (k) => `'${k}', o."deliveryAddress"->'${k}'`,
).join(", ")}) END`;
const ORDER_JSON = `'id', o.id, 'displayId', o."orderNumber"::text, 'orderNumber', o."orderNumber", 'status', o.status, 'type', o.type,
  'subtotal', ${money('o."subtotalCents"')}, 'deliveryFee', ${money('o."deliveryFeeCents"')}, 'discount', ${money('o."discountCents"')},
  'total', ${money('o."totalCents"')}, 'totalAmount', ${money('o."totalCents"')},
  'customer', (SELECT json_build_object('id', c.id, 'name', c.name, 'phone', c.phone) FROM "Customer" c WHERE c.id = o."customerId"),
  'deliveryAddress', ${ADDRESS_JSON}, 'items', ${ITEMS_JSON}, 'payments', ${PAYMENTS_JSON},
  'version', o.version, 'createdAt', ${iso('o."createdAt"')}, 'updatedAt', ${iso('o."updatedAt"')}`;
const HISTORY_JSON = `(SELECT coalesce(json_agg(json_build_object('status', h.status, 'at', ${iso("h.at")}, 'reason', h.reason)
    ORDER BY h.at, h.status, h.id), '[]') FROM "OrderStatusHistory" h WHERE h."orderId" = o.id)`;
const DETAIL_FIELDS = `'couponCode', o."couponCode", 'statusHistory', ${HISTORY_JSON}, 'scheduledFor', ${iso('o."scheduledFor"')},
  'notes', o.notes, 'cancellationReason', o."cancellationReason"`;

/** The id of the page's last order when there is a next page. */
const CURSOR = `CASE WHEN count(*) > $2::int THEN max(o.id::text) FILTER (WHERE o.n = $2::int) END`;

/** $1 the store, $2 the page size: the page as `{ data, pagination }` text, built by PostgreSQL. */
const LIST_SQL = `WITH page AS (
    SELECT o.*, row_number() OVER (ORDER BY o."createdAt" DESC, o.id DESC) AS n FROM "Order" o
    WHERE o."storeId" = $1::uuid ORDER BY o."createdAt" DESC, o.id DESC LIMIT $2::int + 1)
  SELECT json_build_object(
      'data', coalesce(json_agg(json_build_object(${ORDER_JSON}) ORDER BY o.n) FILTER (WHERE o.n <= $2::int), '[]'),
      'pagination', json_build_object('hasMore', count(*) > $2::int, 'cursor', ${CURSOR}, 'nextCursor', ${CURSOR}))::text AS body FROM page o`;

/** $1 the store, $2 the order id: the order as text, built by PostgreSQL; no row when it is not the store's. */
const DETAIL_SQL = `SELECT json_build_object(${ORDER_JSON}, ${DETAIL_FIELDS})::text AS body
  FROM "Order" o WHERE o.id = $2::uuid AND o."storeId" = $1::uuid`;

/** Compact rows: the order's own columns, its relations as JSON arrays of values in a fixed order. */
const COMPACT_COLUMNS = `o.id, o."orderNumber", o.status::text, o.type::text, o."subtotalCents", o."deliveryFeeCents", o."discountCents", o."totalCents",
  o."customerId", c.name AS "customerName", c.phone AS "customerPhone", o."deliveryAddress", o.version,
  ${iso('o."createdAt"')} AS "createdAt", ${iso('o."updatedAt"')} AS "updatedAt",
  (SELECT json_agg(json_build_array(i.id, i."productId", i.name, i.quantity, i."unitPriceCents", i."totalCents", i.notes,
      (SELECT json_agg(json_build_array(x.name, x.quantity, x."priceCents") ORDER BY x.name, x.id) FROM "OrderItemAdditional" x WHERE x."orderItemId" = i.id))
    ORDER BY i.position, i.id) FROM "OrderItem" i WHERE i."orderId" = o.id) AS items,
  (SELECT json_agg(json_build_array(p.method, p.status, p."valueCents", p."changeForCents") ORDER BY p.id) FROM "Payment" p WHERE p."orderId" = o.id) AS payments`;

const LIST_JS = `SELECT ${COMPACT_COLUMNS} FROM "Order" o LEFT JOIN "Customer" c ON c.id = o."customerId"
  WHERE o."storeId" = $1::uuid ORDER BY o."createdAt" DESC, o.id DESC LIMIT $2::int + 1`;

const DETAIL_JS = `SELECT ${COMPACT_COLUMNS}, o."couponCode", ${iso('o."scheduledFor"')} AS "scheduledFor", o.notes, o."cancellationReason",
    (SELECT json_agg(json_build_array(h.status, ${iso("h.at")}, h.reason) ORDER BY h.at, h.status, h.id)
      FROM "OrderStatusHistory" h WHERE h."orderId" = o.id) AS history
  FROM "Order" o LEFT JOIN "Customer" c ON c.id = o."customerId" WHERE o.id = $2::uuid AND o."storeId" = $1::uuid`;

// ---- JS mapping of compact rows

interface CompactRow {
  id: string;
  orderNumber: number;
  status: string;
  type: string;
  subtotalCents: number;
  deliveryFeeCents: number;
  discountCents: number;
  totalCents: number;
  customerId: string | null;
  customerName: string | null;
  customerPhone: string | null;
  deliveryAddress: AddressJson | null;
  version: number;
  createdAt: string;
  updatedAt: string;
  items: [string, string | null, string, number, number, number, string | null, [string, number, number][] | null][] | null;
  payments: [string, string, number, number | null][] | null;
  couponCode?: string | null;
  scheduledFor?: string | null;
  notes?: string | null;
  cancellationReason?: string | null;
  history?: [string, string, string | null][] | null;
}

const cents = (n: number) => n / 100;

function orderJs(r: CompactRow): Record<string, unknown> {
  const body: Record<string, unknown> = {
    id: r.id,
    displayId: String(r.orderNumber),
    orderNumber: r.orderNumber,
    status: r.status,
    type: r.type,
    subtotal: cents(r.subtotalCents),
    deliveryFee: cents(r.deliveryFeeCents),
    discount: cents(r.discountCents),
    total: cents(r.totalCents),
    totalAmount: cents(r.totalCents),
    customer: r.customerId ? { id: r.customerId, name: r.customerName, phone: r.customerPhone } : null,
    deliveryAddress: addressBody(r.deliveryAddress),
    items: (r.items ?? []).map(([id, productId, name, quantity, unit, total, notes, additionals]) => ({
      id,
      productId,
      name,
      quantity,
      unitPrice: cents(unit),
      total: cents(total),
      notes,
      additionals: (additionals ?? []).map(([n, q, price]) => ({ name: n, quantity: q, price: cents(price) })),
    })),
    payments: (r.payments ?? []).map(([method, status, value, changeFor]) => ({
      method,
      status,
      value: cents(value),
      changeFor: changeFor === null ? null : cents(changeFor),
    })),
    version: r.version,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
  if (r.history !== undefined) {
    body.couponCode = r.couponCode;
    body.statusHistory = (r.history ?? []).map(([status, at, reason]) => ({ status, at, reason }));
    body.scheduledFor = r.scheduledFor;
    body.notes = r.notes;
    body.cancellationReason = r.cancellationReason;
  }
  return body;
}

// ---- the two routes

type Answer = { status: number; text: string } | ApiError;

const grants = new Map<string, { storeId: string | null; until: number }>();

/** The token's store when its grant admits it, else null; from the cache while it is fresh. */
async function storeOf(claims: ReaderClaims): Promise<string | null> {
  const key = `${claims.clientId} ${claims.storeCode} ${claims.environment}`;
  const now = Date.now();
  const hit = grants.get(key);
  if (hit && now < hit.until) return hit.storeId;
  const { rows } = await pool.query<{ storeId: string; admitted: boolean }>({
    name: "grant",
    text: GRANT_SQL,
    values: [claims.storeCode, claims.clientId, claims.environment],
  });
  const storeId = rows[0]?.admitted ? rows[0].storeId : null;
  if (grants.size >= 10_000) grants.clear();
  grants.set(key, { storeId, until: now + GRANT_TTL_MS });
  return storeId;
}

async function list(claims: ReaderClaims, limit: number): Promise<Answer> {
  const storeId = await storeOf(claims);
  if (storeId === null) return NO_GRANT;
  const values = [storeId, limit];
  if (mode === "sql") {
    const { rows } = await pool.query<{ body: string }>({ name: "list_sql", text: LIST_SQL, values });
    return { status: 200, text: rows[0].body };
  }
  const { rows } = await pool.query<CompactRow>({ name: "list_js", text: LIST_JS, values });
  const hasMore = rows.length > limit;
  const data = hasMore ? rows.slice(0, limit) : rows;
  const cursor = hasMore ? data[data.length - 1].id : null;
  return { status: 200, text: JSON.stringify({ data: data.map(orderJs), pagination: { hasMore, cursor, nextCursor: cursor } }) };
}

async function detail(claims: ReaderClaims, id: string): Promise<Answer> {
  const storeId = await storeOf(claims);
  if (storeId === null) return NO_GRANT;
  const values = [storeId, id];
  if (mode === "sql") {
    const { rows } = await pool.query<{ body: string }>({ name: "detail_sql", text: DETAIL_SQL, values });
    return rows[0] ? { status: 200, text: rows[0].body } : notFound("order", id);
  }
  const { rows } = await pool.query<CompactRow>({ name: "detail_js", text: DETAIL_JS, values });
  return rows[0] ? { status: 200, text: JSON.stringify(orderJs(rows[0])) } : notFound("order", id);
}

// ---- the token

const verified = new Map<string, { claims: ReaderClaims | ApiError; until: number }>();

async function claimsOf(authorization: string | undefined): Promise<ReaderClaims | ApiError> {
  const token = bearer(authorization);
  if (token instanceof ApiError) return token;
  const now = Date.now();
  const hit = verified.get(token);
  if (hit && now < hit.until) return hit.claims;
  try {
    const { payload } = await jwtVerify(token, jwks, { ...TOKEN_CHECKS, issuer });
    const claims = orderReader(payload);
    if (verified.size >= 10_000) verified.clear();
    verified.set(token, { claims, until: Math.min(now + 60_000, (payload.exp ?? 0) * 1000) });
    return claims;
  } catch {
    return INVALID_TOKEN;
  }
}

async function answer(method: string | undefined, url: string, authorization: string | undefined): Promise<Answer> {
  const claims = await claimsOf(authorization);
  if (claims instanceof ApiError) return claims;
  const q = url.indexOf("?");
  const path = q < 0 ? url : url.slice(0, q);
  if (method !== "GET") return NOT_SERVED;
  if (path === "/public/v1/orders") {
    const params = new URLSearchParams(q < 0 ? "" : url.slice(q + 1));
    const limit = Number(params.get("limit") ?? 20);
    if ([...params.keys()].some((k) => k !== "limit") || !Number.isInteger(limit) || limit < 1 || limit > 100) return NOT_SERVED;
    return list(claims, limit);
  }
  const id = path.startsWith("/public/v1/orders/") ? path.slice("/public/v1/orders/".length) : "";
  return isUuid(id) ? detail(claims, id) : NOT_SERVED;
}

function send(res: ServerResponse, status: number, text: string, type: string): void {
  res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(text) });
  res.end(text);
}

const server = createServer((req, res) => {
  const url = req.url ?? "/";
  answer(req.method, url, req.headers.authorization).then(
    (a) => {
      if (!(a instanceof ApiError)) return send(res, a.status, a.text, "application/json; charset=utf-8");
      const p = problemText(a, issuer, url.split("?")[0], req.headers["x-request-id"]);
      send(res, p.status, p.text, "application/problem+json");
    },
    (err: unknown) => {
      process.stderr.write(`baseline-pg: ${err instanceof Error ? err.stack : String(err)}\n`);
      send(res, 500, JSON.stringify({ code: "INTERNAL_SERVER_ERROR" }), "application/json");
    },
  );
});
server.keepAliveTimeout = 5_000;
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  process.stdout.write(
    `${JSON.stringify({ msg: "listening", name: `baseline-pg-${mode}`, port: typeof address === "object" && address ? address.port : 0 })}\n`,
  );
});
process.on("SIGTERM", () => {
  server.closeAllConnections();
  server.close(() => void pool.end().finally(() => process.exit(0)));
});
