import pg from "pg";

/**
 * The benchmark's data set, generated with set-based SQL (INSERT ... SELECT generate_series) straight into the
 * migrated database: stores, customers, a small catalog, orders with items, additionals, payments and a status
 * history that follows the lifecycle. Store 1 is the "deep" store (520,000 orders, for the deep-page benchmark);
 * the other stores share the rest. Every value is a function of (store, order number), so two runs generate the
 * same shape; only the uuids differ.
 *
 * Speed: secondary indexes are dropped before the load and rebuilt after it, foreign-key triggers are skipped
 * (session_replication_role = replica; the generator keeps references consistent itself), the order rows are
 * inserted by two connections at once, and the child tables by two more statements in parallel.
 */

export interface DatasetOptions {
  stores: number;
  /** Orders of store 1. */
  deepOrders: number;
  /** Orders of every other store. */
  ordersPerStore: number;
}

export interface BenchStore {
  idx: number;
  id: string;
  code: string;
}

export interface Dataset {
  stores: BenchStore[];
  deep: BenchStore & { orders: number };
  counts: Record<string, number>;
  seconds: number;
}

/** 520,000 + 999 × 481 = 1,000,519 orders; the deep store leaves 20,000 orders beyond the 500,000th. */
export const DEFAULT_DATASET: DatasetOptions = { stores: 1000, deepOrders: 520_000, ordersPerStore: 481 };

const PRODUCTS_PER_STORE = 20;
const CATEGORIES = ["Pizzas", "Burgers", "Drinks", "Desserts"];

/** The last orders of every store are still in progress; older ones delivered, or cancelled (every 12th). */
const IN_PROGRESS = 30;

// Per-item values of order n, position q (items per order: 1 + n % 3; an additional on item 0 of even orders).
const product = (n: string, q: number | string) => `((${n} + ${q}) % ${PRODUCTS_PER_STORE})`;
const unit = (n: string, q: number | string) => `(1500 + ${product(n, q)} * 100)`;
const qty = (n: string, q: number | string) => `(1 + (${n} + ${q}) % 3)`;
const extra = (n: string, q: number | string) => `(case when ${q} = 0 and ${n} % 2 = 0 then 300 else 0 end)`;
const itemTotal = (n: string, q: number | string) => `(${qty(n, q)} * (${unit(n, q)} + ${extra(n, q)}))`;
const subtotal = (n: string) =>
  `(${itemTotal(n, 0)} + case when ${n} % 3 >= 1 then ${itemTotal(n, 1)} else 0 end + case when ${n} % 3 = 2 then ${itemTotal(n, 2)} else 0 end)`;

const ORDERS_SQL = (where: string) => `
insert into "Order" (id, "storeId", "orderNumber", type, status, "customerId", "subtotalCents", "deliveryFeeCents", "discountCents",
  "totalCents", "couponCode", "deliveryAddress", notes, "cancellationReason", "createdAt", "updatedAt")
select gen_random_uuid(), p.store_id, 1000 + n, o.type, o.status,
  case when n % 10 = 9 then null else md5('c' || p.idx || ':' || (n % p.ncust))::uuid end,
  o.subtotal, o.fee, o.discount, o.subtotal + o.fee - o.discount,
  case when o.discount > 0 then 'BENCH5' end,
  case when o.type = 'DELIVERY' then jsonb_build_object('street', 'Rua ' || (n % 97), 'number', (n % 1000)::text,
    'neighborhood', 'Centro', 'city', 'São Paulo', 'state', 'SP', 'postalCode', lpad((n % 99999)::text, 5, '0') || '-000')
    || case when n % 4 = 0 then jsonb_build_object('complement', 'Apto ' || (n % 300)) else '{}'::jsonb end end,
  case when n % 4 = 1 then 'Ring the bell' end,
  case when o.status = 'CANCELLED' then 'Customer asked to cancel' end,
  o.created, o.created + o.steps * interval '4 minutes'
from bench_plan p
cross join lateral generate_series(1, p.norders) n
cross join lateral (
  select t.type, s.status, ${subtotal("n")} as subtotal,
    case when t.type = 'PICKUP' then 0 else 500 + (n % 5) * 100 end as fee,
    case when n % 7 = 0 then 500 else 0 end as discount,
    now() - (p.norders - n) * (interval '365 days' / p.norders) - p.idx * interval '1 millisecond' as created,
    case s.status when 'PENDING' then 0 when 'CONFIRMED' then 1 when 'PREPARING' then 2 when 'READY' then 3
      when 'DISPATCHED' then 4 when 'CANCELLED' then 1 else case when t.type = 'PICKUP' then 3 else 4 end end as steps
  from (select (case when n % 5 = 0 then 'PICKUP' else 'DELIVERY' end)::"OrderType" as type) t
  cross join lateral (select (case
    when n > p.norders - ${IN_PROGRESS} then (array['PENDING', 'CONFIRMED', 'PREPARING', 'READY',
      case when t.type = 'PICKUP' then 'READY' else 'DISPATCHED' end])[1 + n % 5]
    when n % 12 = 0 then 'CANCELLED' else 'DELIVERED' end)::"OrderStatus" as status) s
) o
where ${where}`;

const ITEMS_SQL = `
insert into "OrderItem" (id, "orderId", "productId", name, quantity, "unitPriceCents", "totalCents", notes, position)
select md5(o.id::text || ':' || q)::uuid, o.id, md5('p' || p.idx || ':' || ${product("x.n", "q")})::uuid,
  'Product ' || ${product("x.n", "q")}, ${qty("x.n", "q")}, ${unit("x.n", "q")}, ${itemTotal("x.n", "q")},
  case when (x.n + q) % 6 = 0 then 'No onions' end, q
from "Order" o
join bench_plan p on p.store_id = o."storeId"
cross join lateral (select o."orderNumber" - 1000 as n) x
cross join lateral generate_series(0, x.n % 3) q`;

const ADDITIONALS_SQL = `
insert into "OrderItemAdditional" (id, "orderItemId", name, quantity, "priceCents")
select gen_random_uuid(), md5(o.id::text || ':0')::uuid, 'Extra cheese', 1, 300 from "Order" o where o."orderNumber" % 2 = 0`;

const PAYMENTS_SQL = `
insert into "Payment" (id, "orderId", method, status, "valueCents", "changeForCents")
select gen_random_uuid(), o.id, m.method,
  case when m.method = 'CASH' and o.status <> 'DELIVERED' then 'PENDING' else 'APPROVED' end,
  o."totalCents", case when m.method = 'CASH' then (o."totalCents" / 5000 + 1) * 5000 end
from "Order" o cross join lateral (select (array['CREDIT_CARD', 'PIX', 'CASH', 'ONLINE'])[1 + o."orderNumber" % 4] as method) m`;

/** The lifecycle each status was reached by; PICKUP orders skip DISPATCHED. */
const HISTORY_SQL = `
insert into "OrderStatusHistory" (id, "orderId", status, reason, at)
select gen_random_uuid(), o.id, h.s, case when h.s = 'CANCELLED' then 'Customer asked to cancel' end, o."createdAt" + (h.k - 1) * interval '4 minutes'
from "Order" o cross join lateral unnest((case o.status
  when 'PENDING' then '{PENDING}'
  when 'CONFIRMED' then '{PENDING,CONFIRMED}'
  when 'PREPARING' then '{PENDING,CONFIRMED,PREPARING}'
  when 'READY' then '{PENDING,CONFIRMED,PREPARING,READY}'
  when 'DISPATCHED' then '{PENDING,CONFIRMED,PREPARING,READY,DISPATCHED}'
  when 'CANCELLED' then '{PENDING,CANCELLED}'
  else case when o.type = 'PICKUP' then '{PENDING,CONFIRMED,READY,DELIVERED}' else '{PENDING,CONFIRMED,READY,DISPATCHED,DELIVERED}' end
  end)::"OrderStatus"[]) with ordinality as h(s, k)`;

const BULK_TABLES = ["Customer", "Order", "OrderItem", "OrderItemAdditional", "Payment", "OrderStatusHistory"];
/** Tables no foreign key points at: their primary keys can be dropped for the load and rebuilt after it. */
const LEAF_TABLES = ["OrderItemAdditional", "Payment", "OrderStatusHistory"];

async function loader(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query("set synchronous_commit = off; set maintenance_work_mem = '512MB'; set work_mem = '64MB'");
  // Skips foreign-key triggers during the load; needs a superuser (the embedded server). Without, they just run.
  await client.query("set session_replication_role = replica").catch(() => undefined);
  return client;
}

export async function generateDataset(url: string, opts: DatasetOptions = DEFAULT_DATASET, say: (line: string) => void = () => undefined): Promise<Dataset> {
  const started = performance.now();
  const a = await loader(url);
  const b = await loader(url);
  const step = async (label: string, work: () => Promise<unknown>) => {
    const t = performance.now();
    await work();
    say(`  ${label} (${((performance.now() - t) / 1000).toFixed(1)} s)`);
  };
  try {
    const { rows: indexes } = await a.query<{ name: string; def: string }>(
      `select i.indexrelid::regclass::text as name, pg_get_indexdef(i.indexrelid) as def from pg_index i
       where i.indrelid = any($1::regclass[]) and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid)`,
      [BULK_TABLES.map((t) => `"${t}"`)],
    );
    const { rows: keys } = await a.query<{ name: string; tbl: string; def: string }>(
      `select conname as name, conrelid::regclass::text as tbl, pg_get_constraintdef(oid) as def from pg_constraint
       where contype = 'p' and conrelid = any($1::regclass[])`,
      [LEAF_TABLES.map((t) => `"${t}"`)],
    );
    const rebuild = [...indexes.map((ix) => ix.def), ...keys.map((k) => `alter table ${k.tbl} add constraint "${k.name}" ${k.def}`)];
    await step("plan, stores, customers, catalog", async () => {
      for (const ix of indexes) await a.query(`drop index ${ix.name}`);
      for (const k of keys) await a.query(`alter table ${k.tbl} drop constraint "${k.name}"`);
      await a.query(`create unlogged table bench_plan (idx int primary key, store_id uuid not null, norders int not null, ncust int not null)`);
      await a.query(
        `insert into bench_plan select i, gen_random_uuid(), case when i = 1 then $1::int else $2::int end, case when i = 1 then 2000 else 50 end
         from generate_series(1, $3::int) i`,
        [opts.deepOrders, opts.ordersPerStore, opts.stores],
      );
      await a.query(`
        insert into "Store" (id, code, environment, name, slug, phone, address, "openingHours", "publicSettings", "orderSeq", "createdAt", "updatedAt")
        select store_id, 'BENCH' || lpad(idx::text, 5, '0'), 'PRODUCTION', 'Bench Store ' || idx, 'bench-store-' || idx,
          '+55 11 9' || lpad(idx::text, 8, '0'),
          jsonb_build_object('street', 'Avenida Paulista', 'number', idx::text, 'neighborhood', 'Bela Vista', 'city', 'São Paulo', 'state', 'SP', 'postalCode', '01310-100'),
          '[{"dayOfWeek": 1, "opens": "11:00", "closes": "23:00"}]', '{"currency": "BRL", "timezone": "America/Sao_Paulo"}',
          1000 + norders, now() - interval '2 years', now()
        from bench_plan`);
      await a.query(`
        insert into "Customer" (id, "storeId", name, phone, "phoneDigits", email, "createdAt", "updatedAt")
        select md5('c' || p.idx || ':' || k)::uuid, p.store_id, 'Customer ' || p.idx || '-' || k,
          '+55 11 9' || lpad(k::text, 8, '0'), '55119' || lpad(k::text, 8, '0'), 'customer' || k || '@example.com',
          now() - interval '2 years', now() - interval '2 years'
        from bench_plan p cross join lateral generate_series(0, p.ncust - 1) k`);
      await a.query(
        `insert into "Category" (id, "storeId", name, position, "createdAt", "updatedAt")
         select md5('g' || p.idx || ':' || k)::uuid, p.store_id, ($1::text[])[k + 1], k, now(), now()
         from bench_plan p cross join generate_series(0, $2::int - 1) k`,
        [CATEGORIES, CATEGORIES.length],
      );
      await a.query(
        `insert into "Product" (id, "storeId", "categoryId", "categoryPosition", name, description, "priceCents", "createdAt", "updatedAt")
         select md5('p' || p.idx || ':' || k)::uuid, p.store_id, md5('g' || p.idx || ':' || (k % $2::int))::uuid, k % $2::int,
           'Product ' || k, 'A benchmark product', 1500 + k * 100, now(), now()
         from bench_plan p cross join generate_series(0, $1::int - 1) k`,
        [PRODUCTS_PER_STORE, CATEGORIES.length],
      );
    });
    await step("orders", () => Promise.all([a.query(ORDERS_SQL("p.idx = 1")), b.query(ORDERS_SQL("p.idx > 1"))]));
    // Each child table is filled in the transaction that truncates it: with wal_level=minimal the rows then skip
    // the WAL (the embedded server; elsewhere this is merely a transaction).
    const fill = async (c: pg.Client, tables: string[], statements: string[]) => {
      await c.query("begin");
      await c.query(`truncate ${tables.map((t) => `"${t}"`).join(", ")}`);
      for (const sql of statements) await c.query(sql);
      await c.query("commit");
    };
    await step("items, additionals, payments, status history", () =>
      Promise.all([
        fill(a, ["OrderItem", "OrderItemAdditional"], [ITEMS_SQL, ADDITIONALS_SQL]).then(() => fill(a, ["Payment"], [PAYMENTS_SQL])),
        fill(b, ["OrderStatusHistory"], [HISTORY_SQL]),
      ]),
    );
    await step(`${rebuild.length} indexes rebuilt`, async () => {
      const queue = [...rebuild];
      const worker = async (c: pg.Client) => {
        for (let sql = queue.shift(); sql; sql = queue.shift()) await c.query(sql);
      };
      await Promise.all([worker(a), worker(b)]);
    });
    await step("vacuum analyze", async () => {
      const queue = [...BULK_TABLES, "Store", "Category", "Product"];
      const worker = async (c: pg.Client) => {
        for (let t = queue.shift(); t; t = queue.shift()) await c.query(`vacuum (analyze) "${t}"`);
      };
      await Promise.all([worker(a), worker(b)]);
    });
    const { rows: stores } = await a.query<BenchStore>(
      `select p.idx, p.store_id as id, s.code from bench_plan p join "Store" s on s.id = p.store_id order by p.idx`,
    );
    await a.query("drop table bench_plan");
    const counts: Record<string, number> = {};
    for (const t of BULK_TABLES) {
      const { rows } = await a.query<{ n: string }>(`select count(*) as n from "${t}"`);
      counts[t] = Number(rows[0].n);
    }
    return { stores, deep: { ...stores[0], orders: opts.deepOrders }, counts, seconds: (performance.now() - started) / 1000 };
  } finally {
    await Promise.all([a.end(), b.end()]);
  }
}
