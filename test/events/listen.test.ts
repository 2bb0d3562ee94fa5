import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, type Tenant } from "../helpers/tenants.js";
import { createCatalog, type FixtureProduct } from "../helpers/fixtures.js";
import { runCli } from "../helpers/process.js";
import { type Receiver, startReceiver, verifySignature } from "../webhooks/receiver.js";

/** The `listen` CLI as a child process, against the real server and a real local receiver. */

let app: TestApp;
let t: Tenant;
let products: FixtureProduct[];
let receiver: Receiver;

beforeAll(async () => {
  app = await startTestApp();
  t = await createTenant(app);
  products = (await createCatalog(app.services.db, t.storeId)).products;
  receiver = await startReceiver();
});

afterAll(async () => {
  await receiver?.close();
  await app?.close();
});

async function newOrder(): Promise<string> {
  const res = await call<{ id: string }>(app, "POST", "/public/v1/orders", {
    token: t.token,
    body: { type: "PICKUP", items: [{ productId: products[0].id, quantity: 1 }] },
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

it("forwards signed events with the receiver's status, and resumes from its state file after a restart without repeats", async () => {
  const first = [await newOrder(), await newOrder()];
  const state = join(mkdtempSync(join(tmpdir(), "listen-")), "state.json");
  const common = [
    "--base-url",
    app.baseUrl,
    "--client-id",
    t.clientId,
    "--client-secret",
    t.clientSecret,
    "--forward-to",
    receiver.url("/local"),
    "--state",
    state,
  ];

  const once = runCli("listen", [...common, "--after", "0", "--once", "--interval", "100"], {});
  expect(await once.exited).toBe(0);
  const secret = /Signing with (whsec_\S+)/.exec(once.output())?.[1];
  expect(secret).toBeDefined();
  const lines = once
    .output()
    .split("\n")
    .filter((l) => / -> /.test(l));
  expect(lines).toHaveLength(2);
  for (const line of lines) expect(line).toMatch(/^\d+ order\.created [0-9a-f-]{36} -> 200 \(\d+ ms\)$/);

  const received = receiver.requests("/local");
  expect(received.map((r) => (JSON.parse(r.body) as { data: { orderId: string } }).data.orderId)).toEqual(first);
  for (const r of received) expect(verifySignature(String(r.headers["x-service-signature"]), r.body, String(secret))).toBe(true);
  const last = (JSON.parse(received[1].body) as { sequence: number }).sequence;
  expect(JSON.parse(readFileSync(state, "utf8"))).toEqual({ after: String(last) });

  // An event while nobody listens; restarted without --after, it resumes after the state file's sequence:
  // the missed one is sent, the first two are not sent again.
  const missed = await newOrder();
  const live = runCli("listen", [...common, "--secret", String(secret), "--interval", "100"], {});
  await live.waitFor(new RegExp(`Forwarding events after ${last} `));
  const third = await newOrder();
  await live.waitFor(/order\.created \S+ -> 200[\s\S]*order\.created \S+ -> 200/);
  live.child.kill("SIGINT");
  await live.exited;
  const all = receiver.requests("/local").map((r) => JSON.parse(r.body) as { eventId: string; data: { orderId: string } });
  expect(all.map((e) => e.data.orderId)).toEqual([...first, missed, third]);
  expect(new Set(all.map((e) => e.eventId)).size).toBe(4);
  expect(verifySignature(String(receiver.requests("/local")[2].headers["x-service-signature"]), receiver.requests("/local")[2].body, String(secret))).toBe(
    true,
  );
});
