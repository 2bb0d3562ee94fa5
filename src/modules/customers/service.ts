import type { Tx } from "../../platform/db/prisma.js";
import { randomUUID } from "node:crypto";
import { emitEvent, emitEvents } from "../../platform/events/outbox.js";
import { insertCustomer } from "./sql.js";
import { notFound } from "../../platform/errors.js";

export interface CustomerFields {
  name: string;
  phone?: string | null;
  email?: string | null;
}

const digits = (phone: string | null | undefined) => (phone ? phone.replace(/\D/g, "") || null : null);

/** Creates a customer and reports it (customer.created) in the caller's transaction. */
export async function createCustomer(tx: Tx, storeId: string, input: CustomerFields): Promise<{ id: string }> {
  const customer = {
    id: randomUUID(),
    storeId,
    name: input.name.trim(),
    phone: input.phone ?? null,
    phoneDigits: digits(input.phone),
    email: input.email ?? null,
  };
  const created = { customerId: customer.id, name: customer.name, phone: customer.phone };
  await emitEvents(tx, storeId, [{ type: "customer.created", data: created }], insertCustomer({ ...customer, at: new Date() }));
  return customer;
}

/** Updates the given fields only (null clears phone or email) and emits customer.updated. */
export async function updateCustomer(tx: Tx, storeId: string, id: string, input: Partial<CustomerFields>): Promise<{ id: string }> {
  const existing = await tx.customer.findFirst({ where: { id, storeId }, select: { id: true } });
  if (!existing) throw notFound("customer", id);
  const data: Record<string, unknown> = {};
  if (input.name !== undefined) data.name = input.name.trim();
  if (input.phone !== undefined) Object.assign(data, { phone: input.phone, phoneDigits: digits(input.phone) });
  if (input.email !== undefined) data.email = input.email;
  const customer = await tx.customer.update({ where: { id }, data, select: { id: true, name: true, phone: true, email: true } });
  await emitEvent(tx, storeId, "customer.updated", {
    customerId: customer.id,
    name: customer.name,
    phone: customer.phone,
    email: customer.email,
    changed: Object.keys(input).filter((k) => input[k as keyof CustomerFields] !== undefined),
  });
  return customer;
}
