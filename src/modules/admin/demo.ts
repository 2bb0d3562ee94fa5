import type { Db } from "../../platform/db/prisma.js";
import { SCOPES } from "../../platform/auth/scopes.js";
import { createApplication, createGrant, createStore } from "./operations.js";

export interface DemoCredentials {
  storeCode: string;
  clientId: string;
  clientSecret: string;
}

/**
 * On the very first start with DEMO (the embedded database's default), a SANDBOX store, an Application with every
 * scope and a Grant, so a newcomer can call the API at once. A marker row makes this happen once: later starts
 * print nothing secret.
 */
export async function ensureDemo(db: Db): Promise<DemoCredentials | null> {
  const claimed = await db.systemSecret.createMany({ data: [{ name: "demo_created", value: new Date().toISOString() }], skipDuplicates: true });
  if (claimed.count === 0) return null;
  const store = await createStore(db, { name: "Demo Sandbox Store", environment: "SANDBOX", slug: "demo-sandbox-store", phone: "+55 11 4000-0000" });
  const { application, clientSecret } = await createApplication(db, { name: "Demo Application", environment: "SANDBOX", scopes: [...SCOPES] });
  await createGrant(db, { clientId: application.clientId, storeId: store.id });
  return { storeCode: store.code, clientId: application.clientId, clientSecret };
}

export function demoBanner(baseUrl: string, c: DemoCredentials): string {
  return [
    "",
    "Demo SANDBOX credentials (shown once; the secret is stored only as a hash):",
    `  tenant_id:     ${c.storeCode}`,
    `  client_id:     ${c.clientId}`,
    `  client_secret: ${c.clientSecret}`,
    "",
    "Try it:",
    `  TOKEN=$(curl -s -X POST ${baseUrl}/partner/auth/token -H 'content-type: application/json' \\`,
    `    -d '{"grant_type":"client_credentials","client_id":"${c.clientId}","client_secret":"${c.clientSecret}"}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).access_token')`,
    `  curl -s ${baseUrl}/public/v1/store -H "Authorization: Bearer $TOKEN"`,
    "",
  ].join("\n");
}
