import { createHmac, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { generateWebhookSecret, secretPrefix } from "../../src/modules/webhooks/secret.js";
import { signatureHeader } from "../../src/modules/webhooks/signing.js";
import { deliveryHeaders } from "../../src/modules/webhooks/message.js";
import { LATEST_API_VERSION } from "../../src/platform/versions.js";
import { Webhook } from "standardwebhooks";

const TOLERANCE_SECONDS = 300;

/**
 * Receiver-side verifier written from the published signing rule, independent of our signer:
 * `t=<ts>,v1=<hex>[,v1=<hex>...]`, HMAC-SHA256(secret utf8, `${t}.${body}`) in hex.
 */
function verify(header: string, rawBody: string, secret: string, nowSeconds: number): boolean {
  let timestamp: number | undefined;
  const candidates: string[] = [];
  for (const part of header.split(",")) {
    const eq = part.indexOf("=");
    if (eq <= 0) return false;
    const key = part.slice(0, eq);
    const value = part.slice(eq + 1);
    if (key === "t") {
      if (timestamp !== undefined || !/^\d+$/.test(value)) return false;
      timestamp = Number(value);
    } else if (key === "v1") {
      candidates.push(value);
    }
  }
  if (timestamp === undefined || candidates.length === 0) return false;
  if (Math.abs(nowSeconds - timestamp) > TOLERANCE_SECONDS) return false;
  const expected = createHmac("sha256", Buffer.from(secret, "utf8")).update(`${timestamp}.${rawBody}`, "utf8").digest();
  return candidates.some((hex) => {
    if (!/^[0-9a-f]+$/.test(hex)) return false;
    const got = Buffer.from(hex, "hex");
    return got.length === expected.length && timingSafeEqual(got, expected);
  });
}

const now = () => Math.floor(Date.now() / 1000);

describe("signatureHeader", () => {
  it("matches a known vector computed with openssl", () => {
    // printf '1700000000.{"a":1}' | openssl dgst -sha256 -hmac 'whsec_test'
    expect(signatureHeader(["whsec_test"], 1700000000, '{"a":1}')).toBe("t=1700000000,v1=38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789");
    // Non-ASCII secret and body are signed as UTF-8.
    expect(signatureHeader(["whsec_ünï"], 1700000000, "héllo ✓")).toBe("t=1700000000,v1=a79854cb8d4db5e5209db9e58f15089240d8f185dbdcbc24c2a2a2d7a906833a");
  });

  it("verifies with an independent verifier", () => {
    const secret = generateWebhookSecret();
    const body = JSON.stringify({ id: "evt_1", type: "order.created", data: { total: 12.5, note: "ü" } });
    const t = now();
    expect(verify(signatureHeader([secret], t, body), body, secret, t)).toBe(true);
  });

  it("emits one v1 per secret, in order, each verifying with its own secret (rotation)", () => {
    const current = generateWebhookSecret();
    const previous = generateWebhookSecret();
    const body = '{"hello":"world"}';
    const t = now();
    const header = signatureHeader([current, previous], t, body);

    const parts = header.split(",");
    expect(parts).toHaveLength(3);
    expect(parts[0]).toBe(`t=${t}`);
    const [first, second] = parts.slice(1);
    expect(first).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(second).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(first).not.toBe(second);

    // Both receivers (one still on the old secret) accept the delivery.
    expect(verify(header, body, current, t)).toBe(true);
    expect(verify(header, body, previous, t)).toBe(true);
    // Order: the first v1 belongs to the current secret, the second to the previous.
    expect(verify(`t=${t},${first}`, body, current, t)).toBe(true);
    expect(verify(`t=${t},${second}`, body, previous, t)).toBe(true);
    expect(verify(`t=${t},${first}`, body, previous, t)).toBe(false);
    // An unrelated secret does not verify.
    expect(verify(header, body, generateWebhookSecret(), t)).toBe(false);
  });

  it("matches the header's published pattern, with one secret and with two (rotation)", () => {
    const doc: { webhooks: Record<string, { post: { parameters: { name: string; schema: { pattern?: string } }[] } }> } = JSON.parse(
      readFileSync(new URL("../../schema/openapi.json", import.meta.url), "utf8"),
    );
    const patterns = Object.values(doc.webhooks).map((w) => w.post.parameters.find((p) => p.name === "X-Service-Signature")?.schema.pattern);
    expect(new Set(patterns).size).toBe(1);
    const published = new RegExp(patterns[0] ?? "(no pattern)");
    const body = '{"a":1}';
    expect(signatureHeader([generateWebhookSecret()], now(), body)).toMatch(published);
    expect(signatureHeader([generateWebhookSecret(), generateWebhookSecret()], now(), body)).toMatch(published);
    expect(`t=${now()},v1=abc`).not.toMatch(published);
  });

  it("fails verification when the body is tampered with", () => {
    const secret = generateWebhookSecret();
    const t = now();
    const header = signatureHeader([secret], t, '{"amount":100}');
    expect(verify(header, '{"amount":100}', secret, t)).toBe(true);
    expect(verify(header, '{"amount":900}', secret, t)).toBe(false);
    expect(verify(header, '{"amount":100} ', secret, t)).toBe(false);
  });

  it("is rejected by the verifier when the timestamp is too old (replay)", () => {
    const secret = generateWebhookSecret();
    const body = "{}";
    const old = now() - 301;
    const header = signatureHeader([secret], old, body);
    expect(verify(header, body, secret, now())).toBe(false);
    // Same header is fine at the time it was made, so only the age caused the rejection.
    expect(verify(header, body, secret, old)).toBe(true);
    // The timestamp is signed: swapping in a fresh t breaks the signature.
    expect(verify(header.replace(/^t=\d+/, `t=${now()}`), body, secret, now())).toBe(false);
  });

  it("refuses to build an unsigned or malformed header", () => {
    expect(() => signatureHeader([], now(), "{}")).toThrow();
    expect(() => signatureHeader(["whsec_x"], 1.5, "{}")).toThrow(RangeError);
    expect(() => signatureHeader([""], now(), "{}")).toThrow();
  });
});

describe("generateWebhookSecret / secretPrefix", () => {
  it("is whsec_ + 32 random bytes in standard base64", () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice("whsec_".length), "base64")).toHaveLength(32);
  });

  it("is unique per call", () => {
    const secrets = new Set(Array.from({ length: 200 }, () => generateWebhookSecret()));
    expect(secrets.size).toBe(200);
  });

  it("exposes the first 12 characters as the prefix", () => {
    const secret = generateWebhookSecret();
    const prefix = secretPrefix(secret);
    expect(prefix).toHaveLength(12);
    expect(prefix.startsWith("whsec_")).toBe(true);
    expect(secret.startsWith(prefix)).toBe(true);
  });
});

describe("Standard Webhooks headers", () => {
  const body = '{"eventId":"e1","data":{"total":59.9}}';
  const headersFor = (secrets: string[], now = new Date()) =>
    Object.fromEntries(
      Object.entries(deliveryHeaders({ deliveryId: "d1", eventId: "e1", eventType: "order.created", body, secrets, apiVersion: LATEST_API_VERSION, now })).map(
        ([k, v]) => [k.toLowerCase(), v],
      ),
    );

  it("verify with the official library and the secret as the partner received it; a changed body or another secret does not", () => {
    const secret = generateWebhookSecret();
    const headers = headersFor([secret]);
    expect(headers["webhook-id"]).toBe("e1");
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(body.replace("59.9", "5.99"), headers)).toThrow();
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow();
    // A stale timestamp is refused by the library's tolerance (5 minutes).
    expect(() => new Webhook(secret).verify(body, headersFor([secret], new Date(Date.now() - 600_000)))).toThrow();
  });

  it("carry both signatures during a rotation, and none for a secret made before secrets were standard base64", () => {
    const [current, previous] = [generateWebhookSecret(), generateWebhookSecret()];
    const both = headersFor([current, previous]);
    expect(both["webhook-signature"].split(" ")).toHaveLength(2);
    expect(new Webhook(current).verify(body, both)).toBeTruthy();
    expect(new Webhook(previous).verify(body, both)).toBeTruthy();

    const legacy = `whsec_${Buffer.alloc(32, 7).toString("base64url")}`;
    expect(headersFor([legacy])).not.toHaveProperty("webhook-signature");
    const rotated = headersFor([current, legacy]);
    expect(rotated["webhook-signature"].split(" ")).toHaveLength(1);
    expect(new Webhook(current).verify(body, rotated)).toBeTruthy();
    expect(rotated["x-service-signature"].split(",v1=")).toHaveLength(3);
  });
});
