import { expect } from "vitest";
import { createApplication, createGrant, createStore } from "../../src/modules/admin/operations.js";
import { SCOPES, type Scope } from "../../src/platform/auth/scopes.js";
import type { Environment } from "../../src/platform/db/prisma.js";
import { verifyPartnerToken } from "../../src/platform/auth/tokens.js";
import type { PartnerPrincipal } from "../../src/platform/auth/principal.js";
import type { TestApp } from "./app.js";
import { FIRST_API_VERSION, type ApiVersion } from "../../src/platform/versions.js";

export interface Tenant {
  storeId: string;
  storeCode: string;
  clientId: string;
  clientSecret: string;
  token: string;
}

/** A store with an Application granted on it, and a fresh access token. */
/**
 * Its Application is pinned to the first API version unless `apiVersion` says otherwise: the suite was written
 * against that contract, which a version's partners keep seeing unchanged.
 */
export async function createTenant(
  app: TestApp,
  opts: { environment?: Environment; scopes?: readonly Scope[]; name?: string; apiVersion?: ApiVersion } = {},
): Promise<Tenant> {
  const environment = opts.environment ?? "SANDBOX";
  const store = await createStore(app.services.db, { name: opts.name ?? `Store ${Math.random().toString(36).slice(2, 8)}`, environment });
  const { application, clientSecret } = await createApplication(app.services.db, {
    name: "Test app",
    environment,
    scopes: [...(opts.scopes ?? SCOPES)],
    apiVersion: opts.apiVersion ?? FIRST_API_VERSION,
  });
  await createGrant(app.services.db, { clientId: application.clientId, storeId: store.id });
  const token = await getToken(app, application.clientId, clientSecret);
  return { storeId: store.id, storeCode: store.code, clientId: application.clientId, clientSecret, token };
}

/** The principal a request with the tenant's token gets, for tests that call below HTTP (no slot is taken). */
export async function partnerPrincipal(app: TestApp, tenant: Tenant): Promise<PartnerPrincipal> {
  const claims = await verifyPartnerToken(tenant.token, app.services.keys, app.services.issuer);
  return app.services.grants.admit(claims);
}

/**
 * Waits until the app's grant cache is empty, as a change to a grant leaves it once its notification arrives, a
 * moment after the commit: from then on requests are answered by the grant as changed.
 */
export async function grantChangeSeen(app: TestApp): Promise<void> {
  await expect.poll(() => app.services.grants.size, { timeout: 5000, interval: 5 }).toBe(0);
}

export async function getToken(app: TestApp, clientId: string, clientSecret: string, extra: Record<string, string> = {}): Promise<string> {
  const res = await fetch(`${app.baseUrl}/partner/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret, ...extra }),
  });
  if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

/** Small fetch wrapper for tests: JSON in, JSON (or problem+json) out. */
export async function call<T = Record<string, unknown>>(
  app: TestApp,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; headers?: Record<string, string>; rawBody?: string } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined = opts.rawBody;
  if (opts.body !== undefined) {
    headers["content-type"] ??= "application/json";
    body = JSON.stringify(opts.body);
  }
  const res = await fetch(`${app.baseUrl}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  return { status: res.status, headers: res.headers, body: parsed as T };
}

export const ADMIN_KEY = "adm_test_admin_key_0123456789";

export async function graphql<T = Record<string, unknown>>(
  app: TestApp,
  query: string,
  variables: Record<string, unknown> = {},
  token: string | null = ADMIN_KEY,
): Promise<{ status: number; data: T | null; errors?: { message: string; extensions?: Record<string, unknown> }[] }> {
  const res = await fetch(`${app.baseUrl}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data: T | null; errors?: { message: string; extensions?: Record<string, unknown> }[] };
  return { status: res.status, ...body };
}
