import { Prisma } from "../../platform/db/prisma.js";

/**
 * A new customer's row as CTEs for emitEvents (`changed` is the row), so the customer and customer.created make
 * one statement. Plain SQL for that one round trip, which no Prisma create makes.
 */
export const insertCustomer = (c: {
  id: string;
  storeId: string;
  name: string;
  phone: string | null;
  phoneDigits: string | null;
  email: string | null;
  at: Date;
}) =>
  Prisma.sql`
    changed as (
      insert into "Customer" (id, "storeId", name, phone, "phoneDigits", email, "createdAt", "updatedAt")
      values (${c.id}::uuid, ${c.storeId}::uuid, ${c.name}::text, ${c.phone}::text, ${c.phoneDigits}::text, ${c.email}::text,
              ${c.at}::timestamptz, ${c.at}::timestamptz)
      returning id
    )`;
