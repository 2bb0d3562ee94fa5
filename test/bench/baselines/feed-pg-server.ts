import { createServer } from "node:http";
import pg from "pg";
import { EVENT_TYPES } from "../../../src/modules/events/types.js";
import { tenantStoreId } from "./common.js";

/**
 * Baseline for the event feed: GET /public/v1/events?after=&limit= on bare node:http and pg, the same keyset
 * statement on (storeId, sequence) written by hand, answering the façade's `{ data, pagination }` shape. Like the
 * other bare baselines it skips token verification, the grant and rate-limit statement, validation and logs.
 */

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_SIZE ?? 10) });

const PAGE = `SELECT e."id", e."type", e."createdAt", e."data", e."sequence"::text AS "sequence", s."code"
  FROM "Event" e JOIN "Store" s ON s."id" = e."storeId"
  WHERE e."storeId" = $1 AND e."sequence" > $2 AND e."type" = ANY($3::text[])
  ORDER BY e."sequence" ASC LIMIT $4`;

interface Row {
  id: string;
  type: string;
  createdAt: Date;
  data: unknown;
  sequence: string;
  code: string;
}

const stores = new Map((await pool.query<{ id: string; code: string }>(`SELECT "id", "code" FROM "Store"`)).rows.map((s) => [s.code, s.id]));

async function page(storeId: string, after: string, limit: number): Promise<unknown> {
  const { rows } = await pool.query<Row>(PAGE, [storeId, after, EVENT_TYPES, limit + 1]);
  const hasMore = rows.length > limit;
  const data = hasMore ? rows.slice(0, limit) : rows;
  const cursor = data.length > 0 ? data[data.length - 1].sequence : after;
  return {
    data: data.map((r) => ({
      eventId: r.id,
      eventType: r.type,
      timestamp: r.createdAt.toISOString(),
      tenantId: r.code,
      sequence: Number(r.sequence),
      data: r.data,
    })),
    pagination: { hasMore, cursor, nextCursor: cursor },
  };
}

const server = createServer((req, res) => {
  const send = (status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text) });
    res.end(text);
  };
  const url = new URL(req.url ?? "/", "http://localhost");
  const storeId = tenantStoreId(req.headers.authorization, stores);
  if (!storeId) return send(401, { code: "UNAUTHORIZED" });
  if (req.method !== "GET" || url.pathname !== "/public/v1/events") return send(404, { code: "NOT_FOUND" });
  const after = url.searchParams.get("after") ?? "0";
  const limit = Number(url.searchParams.get("limit") ?? 20);
  if (!/^\d{1,16}$/.test(after) || !Number.isInteger(limit) || limit < 1 || limit > 100) return send(400, { code: "INVALID_REQUEST" });
  page(storeId, after, limit).then(
    (body) => send(200, body),
    (err: unknown) => {
      process.stderr.write(`baseline-feed-pg: ${err instanceof Error ? err.stack : String(err)}\n`);
      send(500, { code: "INTERNAL_SERVER_ERROR" });
    },
  );
});
server.keepAliveTimeout = 5_000;
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ msg: "listening", name: "baseline-feed-pg", port: typeof address === "object" && address ? address.port : 0 })}\n`);
});
process.on("SIGTERM", () => {
  server.closeAllConnections();
  server.close(() => void pool.end().finally(() => process.exit(0)));
});
