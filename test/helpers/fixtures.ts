import { randomUUID } from "node:crypto";
import type { Db, OrderStatus, OrderType, Prisma, Tx } from "../../src/platform/db/prisma.js";
import type { Address } from "../../src/modules/store/address.js";
import type { EventData } from "../../src/platform/events/declaration.js";

/**
 * Test data written straight with Prisma: a store's catalog, customers and orders with every field filled
 * with realistic values. It bypasses the API on purpose (no events, no validation), so read tests can set
 * any state and any timestamp. Money is in cents, as stored.
 */

let serial = 0;
/** Distinct values across one test process, so two fixtures never collide on a name or phone. */
const next = (): number => ++serial;
const slug = (text: string, sep: string): string =>
  text
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^a-z0-9]+/g, sep)
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, "");

const FIRST_NAMES = ["Ana", "Bruno", "Carla", "Diego", "Elisa", "Felipe", "Gabriela", "Heitor", "Isabela", "João", "Larissa", "Marcos"];
const LAST_NAMES = ["Silva", "Souza", "Oliveira", "Santos", "Pereira", "Lima", "Costa", "Ribeiro", "Almeida", "Carvalho"];
const STREETS = ["Rua Augusta", "Avenida Paulista", "Rua Oscar Freire", "Rua da Consolação", "Alameda Santos", "Rua Haddock Lobo"];
const NEIGHBORHOODS = ["Consolação", "Bela Vista", "Jardins", "Pinheiros", "Vila Madalena", "Moema"];

export function fakeAddress(n = next()): Address {
  return {
    street: STREETS[n % STREETS.length],
    number: String(100 + ((n * 37) % 1900)),
    neighborhood: NEIGHBORHOODS[n % NEIGHBORHOODS.length],
    city: "São Paulo",
    state: "SP",
    postalCode: `0${1300 + (n % 600)}-${String((n * 7) % 1000).padStart(3, "0")}`,
    complement: n % 3 === 0 ? `Apto ${10 + (n % 90)}` : null,
  };
}

// ---- Catalog ----

interface VariationSeed {
  name: string;
  priceCents: number;
}
interface AdditionalSeed {
  name: string;
  priceCents: number;
  minChoices: number;
  maxChoices: number;
}
interface ProductSeed {
  name: string;
  description: string | null;
  priceCents: number;
  variations?: VariationSeed[];
  additionals?: AdditionalSeed[];
}

const PIZZA_SIZES: VariationSeed[] = [
  { name: "Broto (4 fatias)", priceCents: 3290 },
  { name: "Média (6 fatias)", priceCents: 4290 },
  { name: "Grande (8 fatias)", priceCents: 5290 },
];
const PIZZA_EXTRAS: AdditionalSeed[] = [
  { name: "Borda de catupiry", priceCents: 900, minChoices: 0, maxChoices: 1 },
  { name: "Queijo extra", priceCents: 600, minChoices: 0, maxChoices: 2 },
];

/** A small pizzeria menu: three categories with products, variations and additionals. */
const MENU: { name: string; products: ProductSeed[] }[] = [
  {
    name: "Pizzas",
    products: [
      {
        name: "Pizza Margherita",
        description: "Molho de tomate, mussarela, manjericão fresco",
        priceCents: 4590,
        variations: PIZZA_SIZES,
        additionals: PIZZA_EXTRAS,
      },
      {
        name: "Pizza Calabresa",
        description: "Calabresa fatiada, cebola roxa e azeitonas",
        priceCents: 4990,
        variations: PIZZA_SIZES,
        additionals: PIZZA_EXTRAS,
      },
      {
        name: "Pizza Quatro Queijos",
        description: "Mussarela, provolone, parmesão e gorgonzola",
        priceCents: 5490,
        variations: PIZZA_SIZES,
        additionals: PIZZA_EXTRAS,
      },
    ],
  },
  {
    name: "Bebidas",
    products: [
      {
        name: "Coca-Cola 350ml",
        description: "Lata gelada",
        priceCents: 650,
        additionals: [{ name: "Gelo e limão", priceCents: 0, minChoices: 0, maxChoices: 1 }],
      },
      { name: "Suco de laranja 500ml", description: "Natural, sem açúcar", priceCents: 1200 },
      {
        name: "Água mineral 500ml",
        description: null,
        priceCents: 400,
        variations: [
          { name: "Sem gás", priceCents: 400 },
          { name: "Com gás", priceCents: 450 },
        ],
      },
    ],
  },
  {
    name: "Sobremesas",
    products: [
      { name: "Pudim de leite", description: "Fatia generosa com calda de caramelo", priceCents: 1400 },
      {
        name: "Brownie",
        description: "Chocolate meio amargo com nozes",
        priceCents: 1600,
        additionals: [{ name: "Bola de sorvete de creme", priceCents: 500, minChoices: 0, maxChoices: 2 }],
      },
    ],
  },
];

export type FixtureProduct = Prisma.ProductGetPayload<{ include: { variations: true; additionals: true } }>;
export type FixtureCategory = Prisma.CategoryGetPayload<object>;

/**
 * Creates the menu above in the store, after any categories it already has (positions continue). Every
 * category and product is active; tests that need paused ones update them.
 */
export async function createCatalog(db: Tx, storeId: string): Promise<{ categories: FixtureCategory[]; products: FixtureProduct[] }> {
  const last = await db.category.findFirst({ where: { storeId }, orderBy: { position: "desc" }, select: { position: true } });
  const categories: FixtureCategory[] = [];
  const products: FixtureProduct[] = [];
  for (const [i, section] of MENU.entries()) {
    const position = (last?.position ?? 0) + i + 1;
    const category = await db.category.create({ data: { storeId, name: section.name, position } });
    categories.push(category);
    for (const p of section.products) {
      products.push(
        await db.product.create({
          data: {
            storeId,
            categoryId: category.id,
            categoryPosition: position,
            name: p.name,
            description: p.description,
            priceCents: p.priceCents,
            image: `https://images.example.com/menu/${slug(p.name, "-")}.jpg`,
            variations: { create: (p.variations ?? []).map((v, position) => ({ ...v, position })) },
            additionals: { create: (p.additionals ?? []).map((a, position) => ({ ...a, position })) },
          },
          include: { variations: true, additionals: true },
        }),
      );
    }
  }
  return { categories, products };
}

// ---- Customers ----

export interface CustomerInput {
  name?: string;
  phone?: string | null;
  email?: string | null;
  /** Delivery addresses to store (default: one). */
  addresses?: Address[];
  createdAt?: Date;
  updatedAt?: Date;
}

export type FixtureCustomer = Prisma.CustomerGetPayload<{ include: { addresses: true } }>;

export async function createCustomer(db: Tx, storeId: string, input: CustomerInput = {}): Promise<FixtureCustomer> {
  const n = next();
  const name = input.name ?? `${FIRST_NAMES[n % FIRST_NAMES.length]} ${LAST_NAMES[(n * 7) % LAST_NAMES.length]} ${n}`;
  const phone =
    input.phone === undefined
      ? `(11) 9${String(8000_0000 + n * 7919)
          .slice(-8)
          .replace(/(\d{4})(\d{4})/, "$1-$2")}`
      : input.phone;
  const email = input.email === undefined ? `${slug(name, ".")}@example.com` : input.email;
  const createdAt = input.createdAt ?? new Date();
  return db.customer.create({
    data: {
      storeId,
      name,
      phone,
      phoneDigits: phone ? phone.replace(/\D/g, "") : null,
      email,
      createdAt,
      updatedAt: input.updatedAt ?? createdAt,
      addresses: { create: (input.addresses ?? [fakeAddress(n)]).map((a) => ({ ...a, storeId, createdAt })) },
    },
    include: { addresses: true },
  });
}

// ---- Orders ----

export interface OrderItemInput {
  name: string;
  quantity: number;
  unitPriceCents: number;
  productId?: string | null;
  notes?: string | null;
  additionals?: { name: string; quantity: number; priceCents: number }[];
}

export interface PaymentInput {
  method: string;
  status: string;
  /** Default: the order total. */
  valueCents?: number;
  changeForCents?: number | null;
}

export interface OrderInput {
  type?: OrderType;
  status?: OrderStatus;
  items?: OrderItemInput[];
  payments?: PaymentInput[];
  /** Omitted: a new customer is created; null: an order without a customer. */
  customerId?: string | null;
  deliveryAddress?: Address | null;
  deliveryFeeCents?: number;
  discountCents?: number;
  couponCode?: string | null;
  scheduledFor?: Date | null;
  notes?: string | null;
  cancellationReason?: string | null;
  createdAt?: Date;
  /** Default: createdAt plus 1 ms per status change. The status history is spread evenly between the two. */
  updatedAt?: Date;
}

export type FixtureOrder = Prisma.OrderGetPayload<{
  include: { items: { include: { additionals: true } }; payments: true; statusHistory: true; customer: true };
}>;

export const DEFAULT_ITEMS: OrderItemInput[] = [
  {
    name: "Pizza Margherita",
    quantity: 1,
    unitPriceCents: 4590,
    notes: "Sem manjericão",
    additionals: [{ name: "Borda de catupiry", quantity: 1, priceCents: 900 }],
  },
  { name: "Coca-Cola 350ml", quantity: 2, unitPriceCents: 650 },
];

/** The statuses an order passed through to reach `status` (PICKUP skips DISPATCHED). */
export function statusPath(type: OrderType, status: OrderStatus): OrderStatus[] {
  if (status === "CANCELLED") return ["PENDING", "CANCELLED"];
  const lifecycle: OrderStatus[] =
    type === "DELIVERY"
      ? ["PENDING", "CONFIRMED", "PREPARING", "READY", "DISPATCHED", "DELIVERED"]
      : ["PENDING", "CONFIRMED", "PREPARING", "READY", "DELIVERED"];
  return lifecycle.slice(0, lifecycle.indexOf(status) + 1);
}

/** Item total: quantity × (unit price + each additional's price × its quantity). */
export const itemTotalCents = (i: OrderItemInput): number =>
  i.quantity * (i.unitPriceCents + (i.additionals ?? []).reduce((sum, a) => sum + a.priceCents * a.quantity, 0));

/**
 * An order with items, additionals, payments, status history and (by default) a new customer. The order
 * number is taken from the store's sequence under its row lock, as the real write path does.
 */
export async function createOrder(db: Db, storeId: string, input: OrderInput = {}): Promise<FixtureOrder> {
  const type = input.type ?? "DELIVERY";
  const status = input.status ?? "PENDING";
  const items = input.items ?? DEFAULT_ITEMS;
  const subtotalCents = items.reduce((sum, i) => sum + itemTotalCents(i), 0);
  const deliveryFeeCents = input.deliveryFeeCents ?? (type === "DELIVERY" ? 700 : 0);
  const discountCents = input.discountCents ?? 0;
  const totalCents = subtotalCents + deliveryFeeCents - discountCents;
  const createdAt = input.createdAt ?? new Date();
  const path = statusPath(type, status);
  // By default each status change is one millisecond after the previous one, so the history has an order.
  const updatedAt = input.updatedAt ?? new Date(createdAt.getTime() + path.length - 1);
  const step = path.length > 1 ? (updatedAt.getTime() - createdAt.getTime()) / (path.length - 1) : 0;
  const cancellationReason = input.cancellationReason ?? (status === "CANCELLED" ? "Cliente desistiu do pedido" : null);

  return db.$transaction(async (tx) => {
    const address = input.deliveryAddress === undefined ? (type === "DELIVERY" ? fakeAddress() : null) : input.deliveryAddress;
    const customerId =
      input.customerId === undefined ? (await createCustomer(tx, storeId, { addresses: address ? [address] : [], createdAt })).id : input.customerId;
    const { orderSeq } = await tx.store.update({ where: { id: storeId }, data: { orderSeq: { increment: 1 } }, select: { orderSeq: true } });
    const payments = input.payments ?? [{ method: "PIX", status: "APPROVED" }];
    return tx.order.create({
      data: {
        storeId,
        orderNumber: orderSeq,
        type,
        status,
        customerId,
        subtotalCents,
        deliveryFeeCents,
        discountCents,
        totalCents,
        couponCode: input.couponCode ?? null,
        deliveryAddress: address ? { ...address } : undefined,
        scheduledFor: input.scheduledFor ?? null,
        notes: input.notes ?? null,
        cancellationReason,
        createdAt,
        updatedAt,
        items: {
          create: items.map((i, position) => ({
            productId: i.productId ?? null,
            name: i.name,
            quantity: i.quantity,
            unitPriceCents: i.unitPriceCents,
            totalCents: itemTotalCents(i),
            notes: i.notes ?? null,
            position,
            additionals: { create: i.additionals ?? [] },
          })),
        },
        payments: {
          create: payments.map((p) => ({
            method: p.method,
            status: p.status,
            valueCents: p.valueCents ?? totalCents,
            changeForCents: p.changeForCents ?? null,
          })),
        },
        statusHistory: {
          create: path.map((s, i) => ({
            status: s,
            at: new Date(createdAt.getTime() + Math.round(step * i)),
            reason: s === "CANCELLED" ? cancellationReason : null,
          })),
        },
      },
      include: { items: { include: { additionals: true } }, payments: true, statusHistory: true, customer: true },
    });
  });
}

/** A valid order.created payload, for tests that emit events directly (every event is checked on teardown). */
export const orderCreatedData = (n = next()): EventData<"order.created"> => ({
  orderId: randomUUID(),
  orderNumber: 1000 + n,
  total: 42.5,
  type: "DELIVERY",
  status: "PENDING",
  version: 1,
});

/** A valid customer.created payload, likewise. */
export const customerCreatedData = (n = next()): EventData<"customer.created"> => ({ customerId: randomUUID(), name: `Customer ${n}`, phone: null });
