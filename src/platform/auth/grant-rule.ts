import { forbidden } from "../errors.js";
import type { Environment, Prisma } from "../db/prisma.js";
import type { PartnerClaims, PartnerPrincipal } from "./principal.js";
import type pg from "pg";
import { FIRST_API_VERSION, isApiVersion } from "../versions.js";

/**
 * The grant rule: an Application reaches a store only through a Grant that is ACTIVE, while the Application is
 * ACTIVE, with the store and the Application in one environment (for a token, the token's environment). It decides
 * who gets a token, who may use one, and whose webhook endpoints receive a store's events. Its forms are side by
 * side here, in TypeScript (`admitGrant`), in SQL (`grantActiveSql` for the webhook fan-out) and as a Prisma filter (`issuableGrants`); change them together.
 */

/** What `readGrant` reads of a token's grant. */
export interface GrantView {
  applicationId: string;
  applicationStatus: string;
  appEnvironment: Environment;
  storeId: string;
  storeEnvironment: Environment;
  grantStatus: string;
  /** The Application's API version (its pin). */
  apiVersion: string;
}

/**
 * Whether the grant lets these claims in: it exists and is active, its Application is active, and both the store
 * and the Application belong to the token's environment.
 */
export function admitGrant(claims: PartnerClaims, grant: GrantView | null): PartnerPrincipal {
  if (grant?.grantStatus !== "ACTIVE") throw forbidden("The store has revoked this Application's access.");
  if (grant.applicationStatus !== "ACTIVE") throw forbidden("This Application is disabled. Contact the platform team.");
  if (grant.storeEnvironment !== claims.environment || grant.appEnvironment !== claims.environment) {
    throw forbidden(`A ${claims.environment} token cannot reach this store.`);
  }
  // A pin the code no longer knows cannot be written (setApiVersion checks it); the first version is the safe reading.
  const apiVersion = isApiVersion(grant.apiVersion) ? grant.apiVersion : FIRST_API_VERSION;
  return { kind: "partner", applicationId: grant.applicationId, storeId: grant.storeId, apiVersion, ...claims };
}

/** SQL expressions for the columns the rule reads, as the statement using it names them. */
export interface GrantStatusColumns {
  grantStatus: string;
  applicationStatus: string;
}

/**
 * The rule where no token is involved (the webhook fan-out): the grant and its Application are active. The
 * environments need no comparison there: a Grant is only ever created between a store and an Application of one
 * environment (createGrant), and neither's environment changes. Comparing them anyway would let the planner of the
 * prepared fan-out hash-join every Application by environment instead of reading the endpoint's by its key.
 */
export function grantActiveSql(c: GrantStatusColumns): string {
  return `${c.grantStatus} = 'ACTIVE' AND ${c.applicationStatus} = 'ACTIVE'`;
}

/**
 * The grant of a token's (client_id, tenant_id) as one row of `GrantView`. Read-only and prepared once per
 * connection: three primary-key or unique-index lookups. Plain SQL: Prisma would spend more building the query than
 * PostgreSQL spends running it. A change to any column it reads notifies GRANT_CHANGED_CHANNEL (the grant_changed
 * triggers), which clears the GrantCache in front of it; add a column here, add it to those triggers.
 */
const GRANT_OF_TOKEN = {
  name: "grant_of_token",
  text: `SELECT a.id AS "applicationId", a.status::text AS "applicationStatus", a.environment::text AS "appEnvironment",
      s.id AS "storeId", s.environment::text AS "storeEnvironment", g.status::text AS "grantStatus",
      a."apiVersion"
    FROM "Application" a JOIN "Store" s ON s.code = $2 JOIN "Grant" g ON g."applicationId" = a.id AND g."storeId" = s.id
    WHERE a."clientId" = $1`,
} as const;

/** The grant a token's claims name, or null when there is none; `admitGrant` decides on it. */
export async function readGrant(pool: pg.Pool, claims: Pick<PartnerClaims, "clientId" | "storeCode">): Promise<GrantView | null> {
  const { rows } = await pool.query<GrantView>({ ...GRANT_OF_TOKEN, values: [claims.clientId, claims.storeCode] });
  return rows[0] ?? null;
}

/**
 * The grants a token may be issued for, of an Application the caller found ACTIVE (it answers a disabled one with
 * its own error first): active, on a store of the Application's environment.
 */
export function issuableGrants(app: { id: string; environment: Environment }): Prisma.GrantWhereInput {
  return { applicationId: app.id, status: "ACTIVE", store: { environment: app.environment } };
}
