import { randomUUID } from "node:crypto";
import type { OrderStatus, OrderType, Prisma, Tx } from "../../platform/db/prisma.js";
import type { Address } from "../store/address.js";
import { ApiError, invalidRequest, notFound, unprocessable, type Violation } from "../../platform/errors.js";
import { emitEvents } from "../../platform/events/outbox.js";
import { createCustomer, type CustomerFields } from "../customers/service.js";
import { allowedFrom, checkTransition } from "./lifecycle.js";
import { statusEvents } from "./events.js";
import { drawOrderNumber, insertOrder, moveOrder, type OrderContext } from "./sql.js";
import { MAX_AMOUNT, MAX_AMOUNT_CENTS } from "../../platform/input.js";

export interface PaymentInput {
  method: string;
  value: number;
  changeFor?: number | null;
  /** Set by the sandbox scenarios; partners' payments follow paymentStatusFor. */
  status?: string;
}

export interface NewOrder {
  type: OrderType;
  customerId?: string | null;
  customer?: CustomerFields | null;
  items: { productId: string; quantity: number; notes?: string | null; additionals?: { name: string; quantity: number }[] | null }[];
  deliveryAddress?: Address | null;
  payments?: PaymentInput[] | null;
  scheduledFor?: Date | null;
  notes?: string | null;
  /** Coupon discount, capped at the subtotal; only the sandbox's with_discount scenario sets it. */
  coupon?: { code: string; discountCents: number } | null;
  /**
   * The sandbox's overrides; the REST and GraphQL createOrder inputs never carry them. A fee in place of the
   * store's (on any order type), and a discount in place of the coupon's, not capped: a total below zero is 422.
   */
  deliveryFeeCents?: number | null;
  discountCents?: number | null;
  /** The sandbox's: one payment of the whole total, which only createOrder knows, added to `payments`. */
  payInFull?: ((totalCents: number) => { method: string; status: string; changeForCents?: number | null }) | null;
}

export const PAYMENT_METHODS = ["CASH", "CREDIT_CARD", "DEBIT_CARD", "PIX", "ONLINE", "VOUCHER"] as const;
/** What a payment's status can be (the column is text): cash waits for delivery, the rest arrive approved. */
export const PAYMENT_STATUSES = ["PENDING", "APPROVED", "DECLINED", "REFUNDED"] as const;
export const DEFAULT_DELIVERY_FEE_CENTS = 500;

const toCents = (value: number) => Math.round(value * 100);

/** Cash is collected on delivery; any other method is reported by the partner as already approved. */
function paymentStatusFor(method: string): (typeof PAYMENT_STATUSES)[number] {
  return method === "CASH" ? "PENDING" : "APPROVED";
}

function deliveryFeeCents(publicSettings: Prisma.JsonValue): number {
  const fee = (publicSettings as { deliveryFee?: unknown } | null)?.deliveryFee;
  return typeof fee === "number" && fee >= 0 ? toCents(fee) : DEFAULT_DELIVERY_FEE_CENTS;
}

/**
 * Registers an order (POST /orders and the sandbox). Prices always come from the catalog; the order, its
 * first-time customer and their events commit together. The store row lock taken to draw the next
 * orderNumber also serialises order numbering per store.
 */
export async function createOrder(tx: Tx, storeId: string, input: NewOrder): Promise<{ id: string; totalCents: number; version: number }> {
  if (input.customerId && input.customer) {
    throw invalidRequest("Send customerId or customer, not both.", [
      { field: "customer", code: "CONFLICTING_FIELDS", message: "`customerId` and `customer` cannot both be sent" },
    ]);
  }
  if (input.type === "DELIVERY" && !input.deliveryAddress) {
    throw invalidRequest("A DELIVERY order needs a deliveryAddress.", [
      { field: "deliveryAddress", code: "REQUIRED", message: "`deliveryAddress` is required for DELIVERY orders" },
    ]);
  }
  if (input.type === "PICKUP" && input.deliveryAddress) {
    throw invalidRequest("A PICKUP order has no deliveryAddress.", [
      { field: "deliveryAddress", code: "NOT_ALLOWED", message: "`deliveryAddress` is only for DELIVERY orders" },
    ]);
  }

  const productIds = [...new Set(input.items.map((i) => i.productId))];
  const [seq] = await tx.$queryRaw<OrderContext[]>(drawOrderNumber(storeId, productIds, input.customerId ?? null));
  const byId = new Map(seq.products.map((p) => [p.id, p]));
  const violations: Violation[] = [];
  const items = input.items.map((item, i) => {
    const product = byId.get(item.productId);
    if (!product?.isActive) {
      const code = product ? "PRODUCT_INACTIVE" : "UNKNOWN_PRODUCT";
      violations.push({
        field: `items[${i}].productId`,
        code,
        message: product ? `product ${item.productId} is paused` : `no product ${item.productId} in this store's catalog`,
      });
      return null;
    }
    const additionals = (item.additionals ?? []).map((a, j) => {
      const found = product.additionals.find((x) => x.name.toLowerCase() === a.name.toLowerCase() && x.isAvailable);
      if (!found)
        violations.push({
          field: `items[${i}].additionals[${j}].name`,
          code: "UNKNOWN_ADDITIONAL",
          message: `"${a.name}" is not an available additional of ${product.name}`,
        });
      return { name: found?.name ?? a.name, quantity: a.quantity, priceCents: found?.priceCents ?? 0 };
    });
    const unitWithAdditions = product.priceCents + additionals.reduce((s, a) => s + a.priceCents * a.quantity, 0);
    return {
      id: randomUUID(),
      productId: product.id,
      name: product.name,
      quantity: item.quantity,
      unitPriceCents: product.priceCents,
      totalCents: unitWithAdditions * item.quantity,
      notes: item.notes ?? null,
      position: i,
      additionals,
    };
  });

  let customerId: string | null = input.customerId ?? null;
  if (customerId && !seq.customerKnown) {
    violations.push({ field: "customerId", code: "UNKNOWN_CUSTOMER", message: `no customer ${customerId} in this store` });
  }
  const feeCents = input.deliveryFeeCents ?? (input.type === "DELIVERY" ? deliveryFeeCents(seq.publicSettings) : 0);
  // Every amount is stored as int4 cents. The fee plus the items so far bounds each line, the subtotal and the
  // total (the discount only lowers it), so the item whose quantity first crosses the limit is the one named.
  let runningCents = feeCents;
  for (const [i, item] of items.entries()) {
    runningCents += item?.totalCents ?? 0;
    if (runningCents > MAX_AMOUNT_CENTS) {
      const field = `items[${i}].quantity`;
      violations.push({
        field,
        code: "AMOUNT_TOO_LARGE",
        message: `with ${field} the order total exceeds ${MAX_AMOUNT}, the largest amount an order can hold`,
      });
      break;
    }
  }
  const subtotalCents = items.reduce((s, i) => s + (i?.totalCents ?? 0), 0);
  const discountCents = input.discountCents ?? Math.min(input.coupon?.discountCents ?? 0, subtotalCents);
  const totalCents = subtotalCents + feeCents - discountCents;
  // Only once every line is priced: a refused item would make the subtotal look too small.
  if (violations.length === 0 && totalCents < 0) {
    violations.push({
      field: "discount",
      code: "DISCOUNT_TOO_LARGE",
      message: `the discount of ${discountCents / 100} exceeds the subtotal plus delivery fee, ${(subtotalCents + feeCents) / 100}`,
    });
  }
  const payments = (input.payments ?? []).map((p, i) => {
    if (p.changeFor != null && (p.method !== "CASH" || toCents(p.changeFor) < toCents(p.value))) {
      violations.push({
        field: `payments[${i}].changeFor`,
        code: "INVALID_CHANGE",
        message: `\`payments[${i}].changeFor\` is for CASH payments and must be at least the value`,
      });
    }
    return {
      method: p.method,
      status: p.status ?? paymentStatusFor(p.method),
      valueCents: toCents(p.value),
      changeForCents: p.changeFor == null ? null : toCents(p.changeFor),
    };
  });
  const paid = payments.reduce((s, p) => s + p.valueCents, 0);
  if (payments.length > 0 && paid !== totalCents) {
    violations.push({ field: "payments", code: "PAYMENT_MISMATCH", message: `payments add up to ${paid / 100} but the order total is ${totalCents / 100}` });
  }
  if (violations.length) throw unprocessable(`The order cannot be registered: ${violations.map((v) => v.message).join("; ")}.`, violations);

  if (input.payInFull) payments.push({ valueCents: totalCents, changeForCents: null, ...input.payInFull(totalCents) });

  if (input.customer) customerId = (await createCustomer(tx, storeId, input.customer)).id;
  const order = {
    id: randomUUID(),
    storeId,
    orderNumber: seq.orderSeq,
    type: input.type,
    status: "PENDING" as const,
    version: 1,
    customerId,
    subtotalCents,
    deliveryFeeCents: feeCents,
    discountCents,
    totalCents,
    couponCode: input.coupon?.code ?? null,
    deliveryAddress: input.deliveryAddress ? { ...input.deliveryAddress } : null,
    scheduledFor: input.scheduledFor ?? null,
    notes: input.notes ?? null,
    at: new Date(),
    items: items.filter((i) => i !== null),
    payments,
  };
  const created = {
    orderId: order.id,
    orderNumber: order.orderNumber,
    total: order.totalCents / 100,
    type: order.type,
    status: order.status,
    version: order.version,
  };
  await emitEvents(tx, storeId, [{ type: "order.created", data: created }], insertOrder(order));
  return order;
}

/**
 * Moves an order along its lifecycle (./lifecycle.ts) in one statement, conditional on the statuses the move may
 * come from and on no concurrent change (see moveOrder), so the success path reads nothing first. Only when no row
 * moved is the order read, to say why: 404, 422 INVALID_TRANSITION, or else 409 CONFLICT (a concurrent change won).
 */
export async function changeOrderStatus(tx: Tx, storeId: string, orderId: string, to: OrderStatus, reason?: string | null): Promise<{ id: string }> {
  const move = moveOrder({ storeId, orderId, from: allowedFrom(to), to, reason: reason ?? null, at: new Date() });
  // The version is the move's own, known once it ran: moveOrder's `fields` put it in every event over this 0.
  const emitted = await emitEvents(tx, storeId, statusEvents(orderId, to, reason ?? "", 0), move);
  if (emitted.length > 0) return { id: orderId };
  const order = await tx.order.findFirst({ where: { id: orderId, storeId }, select: { type: true, status: true } });
  if (!order) throw notFound("order", orderId);
  checkTransition(order.type, order.status, to);
  throw new ApiError("CONFLICT", "The order changed while this request ran. Read it again and retry if the move still makes sense.");
}
