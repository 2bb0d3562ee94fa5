import { randomToken, sha256Hex } from "../crypto/hash.js";
import type { AdminRole, Tx } from "../db/prisma.js";

/**
 * The admin key format, for the operations that create keys and the authentication that accepts them: the
 * prefix tells an admin key from a partner JWT, and only a key's SHA-256 is stored (the key is 32 random bytes,
 * so a fast hash is enough), beside its first 12 characters to recognize it by.
 */
export const ADMIN_KEY_PREFIX = "adm_";

/** A new admin key, and what is stored of it. */
export function newAdminKey(): { key: string; keyHash: string; prefix: string } {
  const key = `${ADMIN_KEY_PREFIX}${randomToken(32)}`;
  return { key, keyHash: sha256Hex(key), prefix: key.slice(0, 12) };
}

/** The roles from least to most: each may do everything the ones before it may. */
export const ADMIN_ROLES = ["VIEWER", "SUPPORT", "ADMIN"] as const satisfies readonly AdminRole[];

/** Whether a key of role `has` may use what needs `needs`. */
export function roleAllows(has: AdminRole, needs: AdminRole): boolean {
  return ADMIN_ROLES.indexOf(has) >= ADMIN_ROLES.indexOf(needs);
}

export function isAdminRole(value: string): value is AdminRole {
  return (ADMIN_ROLES as readonly string[]).includes(value);
}

/** The stored admin key `key` is (its id and role), unless there is none or it was revoked. */
export async function activeAdminKey(db: Tx, key: string): Promise<{ id: string; role: AdminRole } | null> {
  const row = await db.adminKey.findUnique({ where: { keyHash: sha256Hex(key) }, select: { id: true, role: true, revokedAt: true } });
  return row && !row.revokedAt ? { id: row.id, role: row.role } : null;
}
