import { type OrderStatus, type OrderType, Prisma } from "../../platform/db/prisma.js";

/**
 * Locks the store's row until the transaction ends, which serialises concurrent seeds of one store. FOR NO KEY
 * UPDATE, not FOR UPDATE: the foreign-key checks of other writes on the store (an event's, an order's) take KEY
 * SHARE on the row, which FOR UPDATE blocks, so a write holding the store's event sequence and a seed about to
 * emit could deadlock. Plain SQL for the row lock, which Prisma cannot express.
 */
export const lockStore = (storeId: string) => Prisma.sql`select id from "Store" where id = ${storeId}::uuid for no key update`;

/** What scenarioMaterial returns. */
export interface ScenarioMaterial {
  products: { id: string; additionals: { name: string }[] }[];
  regularId: string | null;
}

/**
 * What a scenario's order is made of, in one round trip: the store's first three active products in catalog
 * order, each with its first available additional (none or one), and the store's first customer by name (null
 * when it has none). Plain SQL for that one round trip: Prisma sends the two reads separately.
 */
export const scenarioMaterial = (storeId: string) => Prisma.sql`
    select coalesce((
        select json_agg(json_build_object('id', p.id, 'additionals', coalesce((
            select json_agg(json_build_object('name', a.name)) from (
              select a.name from "ProductAdditional" a where a."productId" = p.id and a."isAvailable" order by a.position, a.id limit 1) a), '[]'))
          order by p."categoryPosition", p.name, p.id)
        from (select id, "categoryPosition", name from "Product" where "storeId" = ${storeId}::uuid and "isActive"
              order by "categoryPosition", name, id limit 3) p), '[]') as products,
      (select id from "Customer" where "storeId" = ${storeId}::uuid order by name, id limit 1) as "regularId"`;

/** What lockOrder returns. */
export interface LockedOrder {
  type: OrderType;
  status: OrderStatus;
  version: number;
}

/**
 * An order of the store, its row locked until the transaction ends, so no other change lands between reading its
 * version and moving it. FOR NO KEY UPDATE, as a status change's own UPDATE takes: it leaves the KEY SHARE locks of
 * rows referencing the order free. Plain SQL for the row lock, which Prisma cannot express.
 */
export const lockOrder = (storeId: string, orderId: string) =>
  Prisma.sql`select type, status, version from "Order" where id = ${orderId}::uuid and "storeId" = ${storeId}::uuid for no key update`;

/**
 * Enqueues a simulated order's next step (`task`) at `runAt`. No job key: the version the step carries is what
 * makes a re-run of it a no-op. Plain SQL because graphile_worker.add_job is a function, which Prisma can only call
 * in raw SQL, and it must run in the caller's transaction so the step commits with the change before it.
 */
export const enqueueSimulationStep = (task: string, payload: object, runAt: Date) =>
  Prisma.sql`select graphile_worker.add_job(${task}, ${JSON.stringify(payload)}::json, run_at := ${runAt.toISOString()}::timestamptz)`;
