import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto";

/** AES-256-GCM under the master key; the stored form is `v1.<iv>.<tag>.<ciphertext>` in base64url. */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error("master key must be 32 bytes");
  }

  encrypt(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return ["v1", iv, cipher.getAuthTag(), ct].map((p) => (typeof p === "string" ? p : p.toString("base64url"))).join(".");
  }

  /** True when this key decrypts `stored` (AES-GCM's tag check fails under any other key). */
  opens(stored: string): boolean {
    try {
      this.decrypt(stored);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * HMAC-SHA256 of `message` under a key derived from the master key for `purpose` (HKDF), so a signature made for
   * one purpose never verifies for another and the master key itself signs nothing.
   */
  mac(purpose: string, message: string): Buffer {
    const key = Buffer.from(hkdfSync("sha256", this.key, Buffer.alloc(0), purpose, 32));
    return createHmac("sha256", key).update(message).digest();
  }

  decrypt(stored: string): string {
    const [version, iv, tag, ct] = stored.split(".");
    if (version !== "v1" || !iv || !tag || ct === undefined) throw new Error("unrecognised ciphertext");
    const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(iv, "base64url"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(ct, "base64url")), decipher.final()]).toString("utf8");
  }
}
