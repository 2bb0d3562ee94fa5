import { SCOPES } from "../../src/auth/scopes.js";
import type { TestApp } from "../helpers/app.js";
import { createTenant, type Tenant } from "../helpers/tenants.js";
import type { OperationInput } from "./support/mesh.js";

/**
 * The contract cases: at least one per operation of the OpenAPI document, keyed by operationId. The Mesh
 * suite (mesh.test.ts) runs each through the built GraphQL Mesh against the live server and checks the REST
 * exchange against the document. An operation without an entry fails that suite: a new route adds its case
 * here (a success case at least; error cases where the route has its own).
 */

export interface CaseContext {
  app: TestApp;
  /** A SANDBOX store whose Application holds every scope. */
  tenant: Tenant;
}

export interface CaseRun extends OperationInput {
  /** Bearer token for this run (default: the tenant's); null sends none that is valid. */
  token?: string | null;
}

export interface ContractCase {
  name: string;
  /** The REST inputs; a function when they depend on data the case creates first. */
  run?: (ctx: CaseContext) => Promise<CaseRun> | CaseRun;
  /** Expected HTTP status (default: the operation's documented 2xx). */
  status?: number;
}

const limited = new Map<string, Promise<string>>();

/** A token of another tenant whose Application holds every scope but `scope` (one tenant per scope). */
export function tokenWithout(ctx: CaseContext, scope: string): Promise<string> {
  const key = `${ctx.tenant.storeId}:${scope}`;
  if (!limited.has(key)) limited.set(key, createTenant(ctx.app, { scopes: SCOPES.filter((s) => s !== scope) }).then((t) => t.token));
  return limited.get(key) as Promise<string>;
}

export const CONTRACT_CASES: Record<string, ContractCase[]> = {
  createToken: [
    {
      name: "client credentials in a JSON body",
      run: ({ tenant }) => ({ body: { grant_type: "client_credentials", client_id: tenant.clientId, client_secret: tenant.clientSecret }, token: null }),
    },
    {
      name: "a wrong secret is 401 INVALID_CLIENT",
      status: 401,
      run: ({ tenant }) => ({ body: { grant_type: "client_credentials", client_id: tenant.clientId, client_secret: "wrong" }, token: null }),
    },
  ],
  getJwks: [{ name: "the public keys" }],
  getOpenApiDocument: [{ name: "the document itself" }],
  getStore: [
    { name: "a new store" },
    {
      name: "a store with address, opening hours and settings",
      run: async ({ app, tenant }) => {
        await app.services.db.store.update({
          where: { id: tenant.storeId },
          data: {
            logo: "https://cdn.example/logo.png",
            phone: "+55 11 5555-0100",
            status: "PAUSED",
            address: { street: "Rua A", number: "10", neighborhood: "Centro", city: "São Paulo", state: "SP", postalCode: "01000-000", complement: null },
            openingHours: [{ dayOfWeek: 1, opens: "11:00", closes: "23:00" }],
            publicSettings: { currency: "BRL", acceptsPickup: true },
          },
        });
        return { headers: { "X-Request-Id": "0b6c3c8e-6f3e-4a5e-9d57-2f1c1c9a4b10" } };
      },
    },
    { name: "without merchant:read is 403", status: 403, run: async (ctx) => ({ token: await tokenWithout(ctx, "merchant:read") }) },
    { name: "with a bad token is 401", status: 401, run: () => ({ token: "not-a-jwt" }) },
  ],
};
