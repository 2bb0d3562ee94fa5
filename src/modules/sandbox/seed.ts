import type { Tx } from "../../platform/db/prisma.js";
import { lockStore } from "./sql.js";

/** A deterministic fake catalog and customers for a sandbox store; seeding again duplicates nothing. */

interface SeedProduct {
  name: string;
  description: string;
  price: number;
  variations?: { name: string; price: number }[];
  additionals?: { name: string; price: number; maxChoices?: number }[];
}

const CATALOG: { name: string; products: SeedProduct[] }[] = [
  {
    name: "Pizzas",
    products: [
      {
        name: "Margherita",
        description: "Tomato, mozzarella and basil",
        price: 42.9,
        variations: [
          { name: "Medium", price: 42.9 },
          { name: "Large", price: 54.9 },
        ],
        additionals: [
          { name: "Extra cheese", price: 6.5, maxChoices: 2 },
          { name: "Stuffed crust", price: 9 },
        ],
      },
      {
        name: "Pepperoni",
        description: "Pepperoni and mozzarella",
        price: 49.9,
        variations: [
          { name: "Medium", price: 49.9 },
          { name: "Large", price: 61.9 },
        ],
        additionals: [{ name: "Extra cheese", price: 6.5, maxChoices: 2 }],
      },
    ],
  },
  {
    name: "Burgers",
    products: [
      {
        name: "Classic Burger",
        description: "Beef patty, cheddar, lettuce, tomato",
        price: 32.5,
        additionals: [
          { name: "Bacon", price: 5, maxChoices: 2 },
          { name: "Fried egg", price: 3.5 },
        ],
      },
      { name: "Veggie Burger", description: "Chickpea patty, vegan mayo", price: 29.9, additionals: [{ name: "Avocado", price: 4 }] },
    ],
  },
  {
    name: "Drinks",
    products: [
      {
        name: "Lemonade",
        description: "Fresh lemonade, 500 ml",
        price: 9.9,
        variations: [
          { name: "Sugar", price: 9.9 },
          { name: "No sugar", price: 9.9 },
        ],
      },
      { name: "Cola", description: "Can, 350 ml", price: 6.5 },
    ],
  },
];

const CUSTOMERS = [
  { name: "Ana Souza", phone: "+55 11 91234-5678", email: "ana.souza@example.com" },
  { name: "Bruno Lima", phone: "+55 21 99876-5432", email: "bruno.lima@example.com" },
  { name: "Carla Dias", phone: "+55 31 98765-4321", email: null },
];

const cents = (v: number) => Math.round(v * 100);

export interface SeedResult {
  storeId: string;
  categories: number;
  products: number;
  customers: number;
}

/** Creates whatever of the fixed data set is missing, by name, so calling it again duplicates nothing. */
export async function seedSandboxStore(tx: Tx, storeId: string): Promise<SeedResult> {
  // Serialises concurrent seeds of one store.
  await tx.$executeRaw(lockStore(storeId));
  for (const [position, cat] of CATALOG.entries()) {
    const category =
      (await tx.category.findFirst({ where: { storeId, name: cat.name } })) ??
      (await tx.category.create({ data: { storeId, name: cat.name, position: position + 1 } }));
    for (const p of cat.products) {
      if (await tx.product.findFirst({ where: { storeId, name: p.name }, select: { id: true } })) continue;
      await tx.product.create({
        data: {
          storeId,
          categoryId: category.id,
          categoryPosition: category.position,
          name: p.name,
          description: p.description,
          priceCents: cents(p.price),
          image: `https://images.example.com/sandbox/${p.name.toLowerCase().replace(/\W+/g, "-")}.jpg`,
          variations: { create: (p.variations ?? []).map((v, i) => ({ name: v.name, priceCents: cents(v.price), position: i })) },
          additionals: {
            create: (p.additionals ?? []).map((a, i) => ({ name: a.name, priceCents: cents(a.price), maxChoices: a.maxChoices ?? 1, position: i })),
          },
        },
      });
    }
  }
  for (const c of CUSTOMERS) {
    if (await tx.customer.findFirst({ where: { storeId, name: c.name }, select: { id: true } })) continue;
    await tx.customer.create({ data: { storeId, ...c, phoneDigits: c.phone.replace(/\D/g, "") } });
  }
  const [categories, products, customers] = await Promise.all([
    tx.category.count({ where: { storeId } }),
    tx.product.count({ where: { storeId } }),
    tx.customer.count({ where: { storeId } }),
  ]);
  return { storeId, categories, products, customers };
}
