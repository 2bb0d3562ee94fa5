import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeJwt } from "jose";
import { createTestDatabase } from "../helpers/database.js";
import { openPrisma, type Db } from "../../src/platform/db/prisma.js";
import { createApplication, createGrant, createStore } from "../../src/modules/admin/operations.js";
import { startApiProcess, stopApiProcess, type ApiProcess } from "./support.js";

/** Two API processes on different ports over one database, neither told its public URL. */
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let db: Db;
let a: ApiProcess;
let b: ApiProcess;

beforeAll(async () => {
  database = await createTestDatabase();
  db = openPrisma(database.url, 2);
  // An empty value is the same as unset.
  [a, b] = await Promise.all([startApiProcess(database.url, { PUBLIC_BASE_URL: "" }), startApiProcess(database.url, { PUBLIC_BASE_URL: "" })]);
}, 90_000);
afterAll(async () => {
  await Promise.all([a, b].filter(Boolean).map(stopApiProcess));
  await db.$disconnect();
  await database.drop();
});

async function token(base: string, clientId: string, clientSecret: string): Promise<string> {
  const res = await fetch(`${base}/partner/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

describe("the token issuer without PUBLIC_BASE_URL", () => {
  it("is one value for the deployment: a token from either process is accepted by the other", async () => {
    const store = await createStore(db, { name: "Issuer", environment: "SANDBOX" });
    const { application, clientSecret } = await createApplication(db, { name: "issuer", environment: "SANDBOX", scopes: ["merchant:read"] });
    await createGrant(db, { clientId: application.clientId, storeId: store.id });
    const fromA = await token(a.baseUrl, application.clientId, clientSecret);
    const fromB = await token(b.baseUrl, application.clientId, clientSecret);
    expect(decodeJwt(fromA).iss).toBe(decodeJwt(fromB).iss);
    // The first process to start chose it: its own base URL.
    expect([a.baseUrl, b.baseUrl]).toContain(decodeJwt(fromA).iss);
    for (const [base, t] of [
      [b.baseUrl, fromA],
      [a.baseUrl, fromB],
    ]) {
      const res = await fetch(`${base}/public/v1/store`, { headers: { authorization: `Bearer ${t}` } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { id: string }).id).toBe(store.id);
    }
  });
});
