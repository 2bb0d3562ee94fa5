import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { KeyRing } from "../../src/platform/auth/keys.js";
import { SecretBox } from "../../src/platform/crypto/encryption.js";
import { openPrisma, type Db } from "../../src/platform/db/prisma.js";
import { createTestDatabase } from "../helpers/database.js";

let database: Awaited<ReturnType<typeof createTestDatabase>>;
const clients: Db[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.$disconnect()));
  await database.drop();
});

it("processes starting together on an empty database sign with one key, so each accepts the others' tokens", async () => {
  const box = new SecretBox(randomBytes(32));
  // Each ring over a client of its own, as separate processes would be.
  const rings = Array.from({ length: 6 }, () => {
    const db = openPrisma(database.url, 1);
    clients.push(db);
    return new KeyRing(db, box);
  });
  await Promise.all(rings.map((r) => r.init()));
  expect(new Set(rings.map((r) => r.signingKey().kid)).size).toBe(1);
  expect(await clients[0].signingKey.count()).toBe(1);
});
