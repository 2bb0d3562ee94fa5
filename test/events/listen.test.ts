import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, type Tenant } from "../helpers/tenants.js";
import { createCatalog, customerCreatedData, type FixtureProduct } from "../helpers/fixtures.js";
import { ROOT, runCli, runProcess } from "../helpers/process.js";
import { generateWebhookSecret } from "../../src/modules/webhooks/secret.js";
import { emitEvent } from "../../src/platform/events/outbox.js";
import { API_VERSIONS, FIRST_API_VERSION, LATEST_API_VERSION } from "../../src/platform/versions.js";
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

it("runs outside a clone as partner-listen: one built file with no dependencies forwards from any directory, and npx runs its packed tarball", async () => {
  const dir = mkdtempSync(join(tmpdir(), "partner-listen-"));
  try {
    const pkg = join(dir, "pkg");
    const build = runProcess(process.execPath, ["scripts/build.mjs", "--listen", pkg], {});
    expect(await build.exited, build.output()).toBe(0);
    // The file alone, in a directory of its own: nothing of the clone (its node_modules, tsx) is within reach.
    const away = join(dir, "away");
    mkdirSync(away);
    copyFileSync(join(pkg, "partner-listen.mjs"), join(away, "partner-listen.mjs"));
    const orderId = await newOrder();
    const secret = generateWebhookSecret();
    const args = ["--base-url", app.baseUrl, "--client-id", t.clientId, "--client-secret", t.clientSecret, "--forward-to", receiver.url("/away")];
    const once = runProcess(process.execPath, ["partner-listen.mjs", ...args, "--after", "0", "--once", "--secret", secret], {}, { cwd: away });
    expect(await once.exited, once.output()).toBe(0);
    const received = receiver.requests("/away");
    expect(received.map((r) => (JSON.parse(r.body) as { data: { orderId: string } }).data.orderId)).toContain(orderId);
    for (const r of received) expect(verifySignature(String(r.headers["x-service-signature"]), r.body, secret)).toBe(true);
    expect(readdirSync(away).sort()).toEqual([".listen-state.json", "partner-listen.mjs"]);

    // Packed, it is a package with the one bin, which npx runs from the tarball (its own cache: no registry needed).
    const pack = runProcess("npm", ["pack", pkg, "--pack-destination", dir], {}, { cwd: dir });
    expect(await pack.exited, pack.output()).toBe(0);
    const tarball = readdirSync(dir).find((f) => f.endsWith(".tgz"));
    expect(tarball).toMatch(/^partner-listen-[\d.]+\.tgz$/);
    const npx = runProcess(
      "npx",
      ["--yes", "--cache", join(dir, "npm-cache"), "--package", join(dir, String(tarball)), "partner-listen", "--help"],
      {},
      { cwd: away },
    );
    expect(await npx.exited, npx.output()).toBe(0);
    expect(npx.stdout()).toMatch(/^Usage: partner-listen --base-url/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);

it("is the package's only bin, partner-listen, which runs from source in a clone whatever the directory", async () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { bin: Record<string, string> };
  expect(pkg.bin).toEqual({ "partner-listen": "bin/partner-listen.mjs" });
  const help = runProcess(process.execPath, [join(ROOT, pkg.bin["partner-listen"]), "--help"], {}, { cwd: tmpdir() });
  expect(await help.exited, help.output()).toBe(0);
  expect(help.stdout()).toMatch(/^Usage: partner-listen --base-url/);
}, 60_000);

it("--drill sends every event twice (same eventId and webhook-id, each signed), holds them within the window, and refuses a bad spec", async () => {
  const orders = [await newOrder(), await newOrder(), await newOrder()];
  const state = join(mkdtempSync(join(tmpdir(), "listen-drill-")), "state.json");
  const secret = generateWebhookSecret();
  const args = ["--base-url", app.baseUrl, "--client-id", t.clientId, "--client-secret", t.clientSecret, "--forward-to", receiver.url("/drill")];
  const feed = await call<{ data: { sequence: number; data: { orderId?: string } }[] }>(app, "GET", "/public/v1/events?after=0&limit=100", { token: t.token });
  const after = feed.body.data.find((e) => e.data.orderId === orders[0])?.sequence;
  expect(after).toBeDefined();

  const once = runCli(
    "listen",
    [...args, "--after", String(Number(after) - 1), "--once", "--secret", secret, "--state", state, "--drill", "duplicate=1,reorder=1"],
    {},
  );
  expect(await once.exited, once.output()).toBe(0);
  const received = receiver.requests("/drill");
  expect(received).toHaveLength(6);
  for (const orderId of orders) {
    const copies = received.filter((r) => (JSON.parse(r.body) as { data: { orderId: string } }).data.orderId === orderId);
    expect(copies).toHaveLength(2);
    expect(copies[0].headers["webhook-id"]).toBe(copies[1].headers["webhook-id"]);
    expect(copies[0].headers["x-service-delivery-id"]).toBe(copies[1].headers["x-service-delivery-id"]);
    for (const r of copies) expect(verifySignature(String(r.headers["x-service-signature"]), r.body, secret)).toBe(true);
  }
  const lines = once.output().split("\n");
  expect(lines.filter((l) => / -> 200 \(\d+ ms\) \[reordered\]$/.test(l))).toHaveLength(3);
  expect(lines.filter((l) => / -> 200 \(\d+ ms\) \[duplicate\]$/.test(l))).toHaveLength(3);
  // The state file stands at the last event once every earlier one went out.
  const last = Math.max(...received.map((r) => (JSON.parse(r.body) as { sequence: number }).sequence));
  expect(JSON.parse(readFileSync(state, "utf8"))).toEqual({ after: String(last) });

  for (const bad of ["duplicate=2", "reorder=301", "delay=1.5", "often=1", "duplicate=0", "reorder="]) {
    const refused = runCli("listen", [...args, "--once", "--drill", bad], {});
    expect(await refused.exited, bad).toBe(2);
    expect(refused.output()).toMatch(/--drill/);
  }
}, 60_000);

it("forwards with the Api-Version its body is rendered in: the Application's pin, or --api-version's, which must be a known version", async () => {
  const pinned = await createTenant(app, { apiVersion: LATEST_API_VERSION });
  const event = await app.services.db.$transaction((tx) => emitEvent(tx, pinned.storeId, "customer.created", customerCreatedData()));
  const args = ["--base-url", app.baseUrl, "--client-id", pinned.clientId, "--client-secret", pinned.clientSecret, "--after", "0", "--once"];
  const state = join(mkdtempSync(join(tmpdir(), "listen-version-")), "state.json");
  const forwarded = async (path: string, extra: string[]) => {
    const run = runCli("listen", [...args, "--forward-to", receiver.url(path), "--state", state, ...extra], {});
    expect(await run.exited, run.output()).toBe(0);
    const [request] = receiver.requests(path);
    expect(JSON.parse(request.body)).toMatchObject({ eventId: event.id });
    return { version: request.headers["api-version"], data: (JSON.parse(request.body) as { data: { phone: unknown } }).data };
  };

  // The pin: 2026-12-01 gives a customer without a phone `phone: null`, 2026-11-20 an empty string.
  expect(await forwarded("/version-pin", [])).toEqual({ version: LATEST_API_VERSION, data: expect.objectContaining({ phone: null }) });
  expect(await forwarded("/version-flag", ["--api-version", FIRST_API_VERSION])).toEqual({
    version: FIRST_API_VERSION,
    data: expect.objectContaining({ phone: "" }),
  });

  const refused = runCli("listen", [...args, "--forward-to", receiver.url("/version-bad"), "--api-version", "2026-11-21"], {});
  expect(await refused.exited).toBe(2);
  expect(refused.output()).toContain(`--api-version must be one of ${API_VERSIONS.join(", ")}; "2026-11-21" is not an API version`);
  expect(receiver.requests("/version-bad")).toEqual([]);
}, 60_000);
