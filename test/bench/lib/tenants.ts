import pg from "pg";
import { randomBytes } from "node:crypto";
import { hashSecret } from "../../../src/platform/crypto/hash.js";
import { SCOPES } from "../../../src/platform/auth/scopes.js";
import type { Environment } from "../../../src/platform/db/prisma.js";

/**
 * Tenants of the run: one Application per store, granted on it, each with its own client credentials and a token
 * from the real token endpoint. Rows go in with SQL (the scrypt hash of the shared secret is computed once; one
 * hash per Application would cost minutes), the tokens come from POST /partner/auth/token.
 */

export interface BenchTenant {
  storeId: string;
  storeCode: string;
  clientId: string;
  token: string;
}

export interface TenantPlan {
  storeId: string;
  storeCode: string;
  environment: Environment;
}

export interface Credentials extends TenantPlan {
  clientId: string;
}

/** Sandbox stores with no orders: webhook endpoints on http://127.0.0.1 need SANDBOX. */
export async function createSandboxStores(url: string, count: number, codePrefix = "BENCHSBX"): Promise<TenantPlan[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; code: string }>(
      `insert into "Store" (id, code, environment, name, slug, "updatedAt")
       select gen_random_uuid(), $2 || lpad(i::text, 3, '0'), 'SANDBOX', 'Bench sandbox ' || $2 || i, lower($2) || '-' || i, now()
       from generate_series(1, $1::int) i returning id, code`,
      [count, codePrefix],
    );
    return rows.map((r) => ({ storeId: r.id, storeCode: r.code, environment: "SANDBOX" }));
  } finally {
    await client.end();
  }
}

export async function createApplications(url: string, plans: TenantPlan[]): Promise<{ secret: string; credentials: Credentials[] }> {
  const secret = `cs_${randomBytes(24).toString("base64url")}`;
  const hash = await hashSecret(secret);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const credentials = plans.map((p, i) => ({
      ...p,
      clientId: `${p.environment === "SANDBOX" ? "sbx" : "prd"}_bench_${i}_${randomBytes(6).toString("hex")}`,
    }));
    await client.query(
      `with apps as (
         insert into "Application" (id, name, environment, "clientId", "clientSecretHash", scopes, "updatedAt")
         select gen_random_uuid(), 'Bench app ' || c.client_id, c.env::"Environment", c.client_id, $4, $5::text[], now()
         from unnest($1::text[], $2::text[], $3::uuid[]) as c(client_id, env, store_id)
         returning id, "clientId"
       )
       insert into "Grant" (id, "applicationId", "storeId")
       select gen_random_uuid(), apps.id, c.store_id
       from apps join unnest($1::text[], $3::uuid[]) as c(client_id, store_id) on c.client_id = apps."clientId"`,
      [credentials.map((c) => c.clientId), credentials.map((c) => c.environment), credentials.map((c) => c.storeId), hash, [...SCOPES]],
    );
    return { secret, credentials };
  } finally {
    await client.end();
  }
}

const TOKEN_ATTEMPTS = 10;

/** Access tokens from the API's token endpoint, a few requests at a time (each verifies a scrypt hash). */
export async function fetchTokens(baseUrl: string, secret: string, credentials: Credentials[], parallel = 4): Promise<BenchTenant[]> {
  const out: BenchTenant[] = new Array(credentials.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < credentials.length; i = next++) {
      const c = credentials[i];
      const request = () =>
        fetch(`${baseUrl}/partner/auth/token`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ grant_type: "client_credentials", client_id: c.clientId, client_secret: secret }),
        });
      let res = await request();
      // On a busy machine the API sheds credential checks that wait too long (503, Retry-After): retry as it asks.
      for (let attempt = 1; res.status === 503 && res.headers.has("retry-after") && attempt < TOKEN_ATTEMPTS; attempt++) {
        await res.arrayBuffer();
        await new Promise((r) => setTimeout(r, Number(res.headers.get("retry-after")) * 1000 * (1 + Math.random())));
        res = await request();
      }
      if (res.status !== 200) throw new Error(`token for ${c.clientId}: ${res.status} ${await res.text()}`);
      const { access_token } = (await res.json()) as { access_token: string };
      out[i] = { storeId: c.storeId, storeCode: c.storeCode, clientId: c.clientId, token: access_token };
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return out;
}
