import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Stripe from "stripe";
import { Webhook } from "standardwebhooks";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, type Tenant } from "../helpers/tenants.js";
import { destroyWebhookAgents } from "../../src/modules/webhooks/send.js";
import { startReceiver, type Received, type Receiver } from "./receiver.js";

/** The verification examples of docs/webhooks.md, run against a real delivery: Stripe's SDK, and the Python one as written there. */

let app: TestApp;
let receiver: Receiver;
let tenant: Tenant;
let secret: string;
let delivery: Received;

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" });
  receiver = await startReceiver();
  tenant = await createTenant(app);
  const created = await call<{ id: string; secret: string }>(app, "POST", "/public/v1/webhooks", {
    token: tenant.token,
    body: { url: receiver.url("/verify"), events: ["order.created"] },
  });
  secret = created.body.secret;
  expect((await call(app, "POST", `/public/v1/webhooks/${created.body.id}/test`, { token: tenant.token })).status).toBe(200);
  [delivery] = receiver.requests("/verify");
});

afterAll(async () => {
  await receiver?.close();
  destroyWebhookAgents();
  await app?.close();
});

describe("Stripe's SDK", () => {
  it("webhooks.constructEvent verifies X-Service-Signature with the whsec_ secret, and refuses a changed body or another secret", () => {
    const stripe = new Stripe("sk_unused");
    const header = String(delivery.headers["x-service-signature"]);
    expect(stripe.webhooks.constructEvent(delivery.body, header, secret)).toEqual(JSON.parse(delivery.body));
    expect(() => stripe.webhooks.constructEvent(`${delivery.body} `, header, secret)).toThrow();
    expect(() => stripe.webhooks.constructEvent(delivery.body, header, `${secret}x`)).toThrow();
  });

  it("the Standard Webhooks library verifies the same delivery", () => {
    expect(new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>)).toEqual(JSON.parse(delivery.body));
  });
});

/** The Python example, exactly as docs/webhooks.md shows it. */
const pythonExample = /```python\n([\s\S]*?)```/.exec(readFileSync(new URL("../../docs/webhooks.md", import.meta.url), "utf8"))?.[1] ?? "";
const python = spawnSync("python3", ["--version"]).status === 0;
if (!python) console.warn("\n*** python3 is not installed: the Python verification example of docs/webhooks.md is NOT tested ***\n");

describe.skipIf(!python)("the Python standard-library example", () => {
  const run = (body: string, key: string) => {
    const script = `${pythonExample}\nimport os, sys\nprint(verify(os.environ["HEADER"], sys.stdin.buffer.read(), os.environ["SECRET"]))\n`;
    const out = spawnSync("python3", ["-c", script], {
      input: Buffer.from(body, "utf8"),
      env: { ...process.env, HEADER: String(delivery.headers["x-service-signature"]), SECRET: key },
      encoding: "utf8",
    });
    expect(out.stderr).toBe("");
    return out.stdout.trim();
  };

  it("verifies a real delivery and refuses a changed body or another secret", () => {
    expect(pythonExample).toContain("def verify(");
    expect(run(delivery.body, secret)).toBe("True");
    expect(run(`${delivery.body} `, secret)).toBe("False");
    expect(run(delivery.body, `${secret}x`)).toBe("False");
  });
});
