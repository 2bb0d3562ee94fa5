import type { Config } from "../config.js";
import type { Db } from "../db/prisma.js";

const ISSUER_ROW = "token_issuer";

/**
 * The `iss` of access tokens: one value for every process of a deployment, or they would reject each other's
 * tokens. PUBLIC_BASE_URL is the issuer when set (and is stored, so processes started without it agree);
 * otherwise the first process to start stores its own base URL and every later one reads it.
 */
export async function resolveIssuer(config: Config, db: Db): Promise<string> {
  if (config.PUBLIC_BASE_URL) {
    await db.systemSecret.upsert({
      where: { name: ISSUER_ROW },
      create: { name: ISSUER_ROW, value: config.publicBaseUrl },
      update: { value: config.publicBaseUrl },
    });
    return config.publicBaseUrl;
  }
  await db.systemSecret.createMany({ data: [{ name: ISSUER_ROW, value: config.publicBaseUrl }], skipDuplicates: true });
  const row = await db.systemSecret.findUniqueOrThrow({ where: { name: ISSUER_ROW } });
  return row.value;
}
