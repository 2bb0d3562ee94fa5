import { randomToken, sha256Hex } from "../crypto/hash.js";
import type { Tx } from "../db/prisma.js";

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

/** The id of the stored admin key `key` is, unless there is none or it was revoked. */
export async function activeAdminKeyId(db: Tx, key: string): Promise<string | null> {
  const row = await db.adminKey.findUnique({ where: { keyHash: sha256Hex(key) } });
  return row && !row.revokedAt ? row.id : null;
}
