import { Prisma } from "../../../platform/db/prisma.js";

/**
 * Locks the (Application, Store)'s ACTIVE Grant row for the rest of the transaction and returns its id (no row
 * when the grant is revoked): it serialises concurrent endpoint creations of one owner, so the endpoint limit
 * cannot be overshot. Plain SQL for the FOR UPDATE, which Prisma cannot express.
 */
export const lockActiveGrant = (owner: { applicationId: string; storeId: string }) => Prisma.sql`
      select id from "Grant" where "applicationId" = ${owner.applicationId}::uuid and "storeId" = ${owner.storeId}::uuid and status = 'ACTIVE' for update`;

/**
 * Replaces an endpoint's signing secret, keeping the current one as the previous secret for `overlapMs`, and returns
 * (id, previousSecretExpiresAt); no row when the endpoint is not found or not the owner's (owner null: any).
 * Plain SQL because it copies one column into another in the same UPDATE (the demoted secret is the row's
 * current one, so two concurrent rotations cannot both demote it) and computes the expiry with the database's
 * clock; Prisma's update can set only values known before the statement.
 */
export const rotateEndpointSecret = (p: {
  id: string;
  owner: { applicationId: string; storeId: string } | null;
  secretCiphertext: string;
  secretPrefix: string;
  overlapMs: number;
}) => Prisma.sql`
    update "WebhookEndpoint" set
      "previousSecretCiphertext" = "secretCiphertext",
      "previousSecretExpiresAt" = now() + ${p.overlapMs}::int * interval '1 millisecond',
      "secretCiphertext" = ${p.secretCiphertext},
      "secretPrefix" = ${p.secretPrefix},
      "updatedAt" = now()
    where id = ${p.id}::uuid
      and (${p.owner?.applicationId ?? null}::uuid is null or "applicationId" = ${p.owner?.applicationId ?? null}::uuid)
      and (${p.owner?.storeId ?? null}::uuid is null or "storeId" = ${p.owner?.storeId ?? null}::uuid)
    returning id, "previousSecretExpiresAt"`;

/**
 * Locks an endpoint's row (FOR NO KEY UPDATE, as recording an attempt does, endpoints before deliveries) and returns
 * its status. Plain SQL for the row lock, which Prisma cannot express.
 */
export const lockEndpoint = (id: string) => Prisma.sql`select status from "WebhookEndpoint" where id = ${id}::uuid for no key update`;
