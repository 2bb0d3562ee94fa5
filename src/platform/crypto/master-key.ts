import { randomBytes } from "node:crypto";
import { ConfigError } from "../config.js";
import type { Db } from "../db/prisma.js";
import { SecretBox } from "./encryption.js";

const MASTER_KEY_ROW = "master_key";

/** One secret the database holds encrypted, to try a key on: a signing key, else a webhook endpoint's secret. */
async function storedCiphertext(db: Db): Promise<string | null> {
  const key = await db.signingKey.findFirst({ select: { privateJwk: true }, orderBy: { createdAt: "desc" } });
  if (key) return key.privateJwk;
  const endpoint = await db.webhookEndpoint.findFirst({ select: { secretCiphertext: true } });
  return endpoint?.secretCiphertext ?? null;
}

/**
 * The box for secrets at rest, under MASTER_KEY or, without it, the key the database keeps. A key that does not
 * open what is stored stops the start (every secret would be unreadable, and new ones written under a second key),
 * and a key is generated and kept only in a database that holds no encrypted secret yet: one whose secrets were
 * encrypted under a MASTER_KEY it never stored must get that key back, never a new one.
 */
export async function openSecretBox(configured: string | undefined, db: Db): Promise<SecretBox> {
  const sample = await storedCiphertext(db);
  if (configured) {
    const box = new SecretBox(Buffer.from(configured, "base64"));
    if (sample !== null && !box.opens(sample)) {
      throw new ConfigError(
        "MASTER_KEY does not open the secrets stored in this database: set MASTER_KEY to the key they were encrypted with (or unset it if the database keeps its own key).",
      );
    }
    return box;
  }
  const kept = await db.systemSecret.findUnique({ where: { name: MASTER_KEY_ROW } });
  if (kept) {
    const box = new SecretBox(Buffer.from(kept.value, "base64"));
    if (sample !== null && !box.opens(sample)) {
      throw new ConfigError(
        "MASTER_KEY is not set and the key this database keeps does not open its secrets: set MASTER_KEY to the key they were encrypted with.",
      );
    }
    return box;
  }
  if (sample !== null) {
    throw new ConfigError("MASTER_KEY is not set and this database holds secrets encrypted with a key it does not keep: set MASTER_KEY to that key.");
  }
  // Processes starting together on an empty database: the first insert wins and every one reads it back.
  await db.systemSecret.createMany({ data: [{ name: MASTER_KEY_ROW, value: randomBytes(32).toString("base64") }], skipDuplicates: true });
  const row = await db.systemSecret.findUniqueOrThrow({ where: { name: MASTER_KEY_ROW } });
  return new SecretBox(Buffer.from(row.value, "base64"));
}
