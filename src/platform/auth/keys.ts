import { exportJWK, generateKeyPair, importJWK, type JWK, type CryptoKey, type JWTHeaderParameters } from "jose";
import { randomToken } from "../crypto/hash.js";
import type { SecretBox } from "../crypto/encryption.js";
import type { Db } from "../db/prisma.js";

export const SIGNING_ALG = "EdDSA";
/**
 * The kid of the key generated on an empty database. Processes starting together there must agree on one key, or
 * each signs with its own and the others refuse its tokens until their next reload: with a fixed kid the first
 * insert wins and every process loads that one.
 */
const FIRST_KID = "k_first";

interface LoadedKey {
  kid: string;
  publicJwk: JWK;
  publicKey: CryptoKey;
  privateKey: CryptoKey;
  createdAt: Date;
}

/**
 * Token signing keys. Keys live in the database (private halves encrypted), so every process signs and
 * verifies with the same set; more than one may be active during a rotation: the newest signs, all verify.
 * An unknown `kid` triggers one reload (another process may have just created a key), at most every 5 s.
 */
export class KeyRing {
  private keys = new Map<string, LoadedKey>();
  private signer: LoadedKey | null = null;
  private lastReload = 0;

  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
  ) {}

  async init(configuredPrivateJwks?: JWK[]): Promise<void> {
    for (const jwk of configuredPrivateJwks ?? []) await this.store(jwk);
    await this.reload();
    if (this.keys.size === 0) await this.generate(FIRST_KID);
    // Every key was retired, the first one included: a fresh kid.
    if (this.keys.size === 0) await this.generate(`k_${randomToken(12)}`);
  }

  private async generate(kid: string): Promise<void> {
    const { privateKey } = await generateKeyPair(SIGNING_ALG, { crv: "Ed25519", extractable: true });
    await this.store({ ...(await exportJWK(privateKey)), kid });
    await this.reload();
  }

  private async store(privateJwk: JWK): Promise<void> {
    if (!privateJwk.kid || !privateJwk.d) throw new Error("a configured signing key needs a kid and a private part");
    const { d: _d, ...publicJwk } = privateJwk;
    // An existing kid keeps its key: of two processes storing one at once, the first insert wins.
    await this.db.signingKey.createMany({
      data: [
        {
          id: privateJwk.kid,
          algorithm: SIGNING_ALG,
          publicJwk: { ...publicJwk, alg: SIGNING_ALG, use: "sig" },
          privateJwk: this.box.encrypt(JSON.stringify(privateJwk)),
        },
      ],
      skipDuplicates: true,
    });
  }

  private async reload(): Promise<void> {
    this.lastReload = Date.now();
    const rows = await this.db.signingKey.findMany({ where: { active: true }, orderBy: { createdAt: "asc" } });
    const next = new Map<string, LoadedKey>();
    for (const row of rows) {
      const existing = this.keys.get(row.id);
      if (existing) {
        next.set(row.id, existing);
        continue;
      }
      const privateJwk = JSON.parse(this.box.decrypt(row.privateJwk)) as JWK;
      const publicJwk = row.publicJwk as JWK;
      next.set(row.id, {
        kid: row.id,
        publicJwk,
        publicKey: (await importJWK(publicJwk, SIGNING_ALG)) as CryptoKey,
        privateKey: (await importJWK(privateJwk, SIGNING_ALG)) as CryptoKey,
        createdAt: row.createdAt,
      });
    }
    this.keys = next;
    this.signer = [...next.values()].at(-1) ?? null;
  }

  signingKey(): { kid: string; key: CryptoKey } {
    if (!this.signer) throw new Error("key ring not initialised");
    return { kid: this.signer.kid, key: this.signer.privateKey };
  }

  /** jose key resolver: finds the verification key by `kid`. */
  resolve = async (header: JWTHeaderParameters): Promise<CryptoKey> => {
    const kid = header.kid;
    if (!kid) throw new Error("token has no kid");
    if (!this.keys.has(kid) && Date.now() - this.lastReload > 5000) await this.reload();
    const key = this.keys.get(kid);
    if (!key) throw new Error("unknown kid");
    return key.publicKey;
  };

  jwks(): { keys: JWK[] } {
    return { keys: [...this.keys.values()].map((k) => ({ ...k.publicJwk, kid: k.kid })) };
  }
}
