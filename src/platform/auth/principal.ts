import type { AdminRole, Environment } from "../db/prisma.js";
import type { Scope } from "./scopes.js";
import type { ApiVersion } from "../versions.js";

/** Who is calling. Partner principals carry their tenant; nothing else decides which store a request sees. */
export type Principal =
  | {
      kind: "partner";
      applicationId: string;
      clientId: string;
      storeId: string;
      storeCode: string;
      environment: Environment;
      scopes: ReadonlySet<Scope>;
      tokenId: string;
      /** The token's expiry, ms since the epoch. */
      expiresAt: number;
      /** The Application's pinned API version, read with the grant (a request's Api-Version header overrides it). */
      apiVersion: ApiVersion;
    }
  /** adminKeyId is null for ADMIN_API_KEY, which is not stored. */
  | { kind: "admin"; adminKeyId: string | null; role: AdminRole }
  | { kind: "anonymous" };

export type PartnerPrincipal = Extract<Principal, { kind: "partner" }>;

/** The verified claims of a partner access token: who calls and for which store, before the grant is read. */
export interface PartnerClaims {
  clientId: string;
  storeCode: string;
  environment: Environment;
  scopes: ReadonlySet<Scope>;
  tokenId: string;
  /** When the token expires, in ms since the epoch (its `exp`): a live stream ends then. */
  expiresAt: number;
}
