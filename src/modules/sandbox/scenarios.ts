import { randomInt } from "node:crypto";
import type { Tx } from "../../platform/db/prisma.js";
import { ApiError } from "../../platform/errors.js";
import { ADDRESS } from "../../platform/examples.js";
import type { CustomerFields } from "../customers/service.js";
import { changeOrderStatus, createOrder, type NewOrder } from "../orders/service.js";
import { seedSandboxStore } from "./seed.js";
import { checkSimulation, scheduleSimulationStep, type Simulation } from "./simulate.js";
import { type ScenarioMaterial, scenarioMaterial } from "./sql.js";

export const SCENARIOS = ["delivery", "pickup", "scheduled", "cash", "online_payment", "with_discount", "cancelled"] as const;
export type Scenario = (typeof SCENARIOS)[number];

const FIRST_NAMES = ["Diego", "Elisa", "Fábio", "Gabriela", "Heitor", "Isabela", "João", "Larissa"];

/** Values that replace a scenario's (validated by sandboxOrderInput); amounts in currency units. */
export interface SandboxOverrides {
  items?: NewOrder["items"] | null;
  customer?: CustomerFields | null;
  deliveryFee?: number | null;
  discount?: number | null;
  notes?: string | null;
  scheduledFor?: Date | null;
}

const toCents = (value: number) => Math.round(value * 100);

/** The scenario's order with the overrides given applied; an explicit null `notes` clears the scenario's. */
function withOverrides(order: NewOrder, o: SandboxOverrides): NewOrder {
  return {
    ...order,
    ...(o.items ? { items: o.items } : {}),
    ...(o.customer ? { customerId: null, customer: o.customer } : {}),
    ...(o.notes !== undefined ? { notes: o.notes } : {}),
    ...(o.scheduledFor ? { scheduledFor: o.scheduledFor } : {}),
    ...(o.deliveryFee != null ? { deliveryFeeCents: toCents(o.deliveryFee) } : {}),
    ...(o.discount != null ? { discountCents: toCents(o.discount) } : {}),
  };
}

/** createOrder names fields as POST /orders does; a refusal of an overridden value names it under `overrides`. */
function underOverrides(error: unknown, o: SandboxOverrides): unknown {
  if (!(error instanceof ApiError) || !error.violations) return error;
  const given = new Set(Object.entries(o).flatMap(([k, v]) => (v === undefined ? [] : [k])));
  const violations = error.violations.map((v) => (given.has(v.field.split(/[.[]/)[0]) ? { ...v, field: `overrides.${v.field}` } : v));
  return new ApiError(error.code, error.detail, violations, error.headers);
}

/**
 * Generates one order of a sandbox scenario through the real order code path, so the registered
 * webhooks fire. A store with no catalog is seeded first. With `simulation`, the order's first step is
 * scheduled with it (./simulate.ts); an `until` the order cannot reach is 422 before anything is written.
 */
export async function generateSandboxOrder(
  tx: Tx,
  storeId: string,
  scenario: Scenario,
  overrides: SandboxOverrides = {},
  simulation: Simulation | null = null,
): Promise<{ id: string }> {
  const type = scenario === "pickup" ? "PICKUP" : "DELIVERY";
  if (simulation) checkSimulation(type, scenario === "cancelled" ? "CANCELLED" : "PENDING", simulation);
  const material = async () => (await tx.$queryRaw<ScenarioMaterial[]>(scenarioMaterial(storeId)))[0];
  let { products, regularId } = await material();
  if (products.length === 0) {
    await seedSandboxStore(tx, storeId);
    ({ products, regularId } = await material());
  }
  const firstTimer = { name: `${FIRST_NAMES[randomInt(FIRST_NAMES.length)]} Sandbox`, phone: `+55 11 9${randomInt(10_000_000, 99_999_999)}`, email: null };

  const items = [
    { productId: products[0].id, quantity: 1, notes: "No onions, please", additionals: products[0].additionals.map((a) => ({ name: a.name, quantity: 1 })) },
    ...(products[1] ? [{ productId: products[1].id, quantity: 2 }] : []),
  ];
  const base: NewOrder = { type, items, deliveryAddress: ADDRESS, ...(regularId ? { customerId: regularId } : { customer: firstTimer }) };
  const scenarioOrder: NewOrder = {
    delivery: { ...base, customerId: null, customer: firstTimer },
    pickup: { ...base, deliveryAddress: null },
    scheduled: { ...base, scheduledFor: new Date(Date.now() + 2 * 3600_000), notes: "Deliver after 7 pm" },
    cash: base,
    online_payment: base,
    with_discount: { ...base, coupon: { code: "SANDBOX10", discountCents: 1000 } },
    cancelled: base,
  }[scenario];

  const payInFull = {
    delivery: () => ({ method: "CREDIT_CARD", status: "APPROVED" }),
    pickup: () => ({ method: "PIX", status: "APPROVED" }),
    scheduled: () => ({ method: "CREDIT_CARD", status: "APPROVED" }),
    cash: (total: number) => ({ method: "CASH", status: "PENDING", changeForCents: Math.ceil((total + 1) / 5000) * 5000 }),
    online_payment: () => ({ method: "ONLINE", status: "APPROVED" }),
    with_discount: () => ({ method: "CREDIT_CARD", status: "APPROVED" }),
    cancelled: () => ({ method: "CREDIT_CARD", status: "REFUNDED" }),
  }[scenario];
  const order = await createOrder(tx, storeId, { ...withOverrides(scenarioOrder, overrides), payInFull }).catch((e: unknown) => {
    throw underOverrides(e, overrides);
  });
  if (scenario === "cancelled") await changeOrderStatus(tx, storeId, order.id, "CANCELLED", "Cancelled by the restaurant: an ingredient ran out");
  if (simulation) await scheduleSimulationStep(tx, { storeId, orderId: order.id, ...simulation, version: order.version });
  return order;
}
