import { afterAll, beforeAll, expect, it } from "vitest";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, runCli } from "../helpers/process.js";

/** `npm start` from nothing: embedded PostgreSQL, migrations, the demo credentials, and a clean restart. */

let dataDir: string;
let port: number;
let env: Record<string, string>;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "partner-start-"));
  port = await freePort();
  env = { DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1", DATABASE_URL: "", LOG_LEVEL: "info" };
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

it("first start creates and prints demo credentials that work; a second start prints nothing secret", async () => {
  const first = runCli("start", [], env);
  await first.waitFor(/Try it:[\s\S]*public\/v1\/store/, 60_000);
  const clientId = /client_id:\s+(\S+)/.exec(first.output())![1];
  const clientSecret = /client_secret:\s+(\S+)/.exec(first.output())![1];
  const base = `http://127.0.0.1:${port}`;
  const tokenRes = await fetch(`${base}/partner/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret }),
  });
  expect(tokenRes.status).toBe(200);
  const { access_token } = (await tokenRes.json()) as { access_token: string };
  const store = await fetch(`${base}/public/v1/store`, { headers: { authorization: `Bearer ${access_token}` } });
  expect(store.status).toBe(200);
  expect(((await store.json()) as { name: string }).name).toBe("Demo Sandbox Store");

  // The admin CLI shares the running server's embedded cluster.
  const list = runCli("admin", ["list-stores", "--json"], env);
  expect(await list.exited).toBe(0);
  expect(JSON.parse(list.output().slice(list.output().indexOf("[")))).toHaveLength(1);

  first.child.kill("SIGTERM");
  expect(await first.exited).toBe(0);
  const logs = first.output();
  expect(logs).toMatch(/"requestId":"[0-9a-f-]{36}".*"method":"GET","path":"\/public\/v1\/store","status":200,"durationMs"/);
  const logLines = logs.split("\n").filter((l) => l.startsWith("{"));
  for (const line of logLines) {
    expect(line).not.toContain(clientSecret);
    expect(line).not.toContain(access_token);
  }

  const second = runCli("start", [], env);
  await second.waitFor(/"msg":"listening"/, 60_000);
  expect(second.output()).not.toContain("client_secret");
  second.child.kill("SIGTERM");
  expect(await second.exited).toBe(0);

  // Without the server, the CLI starts the cluster itself.
  const created = runCli("admin", ["create-store", "--name", "Offline", "--environment", "PRODUCTION", "--json"], env);
  expect(await created.exited).toBe(0);
  expect(created.output()).toContain('"environment": "PRODUCTION"');
}, 120_000);

it("refuses to start with a clear message per bad variable", async () => {
  const bad = runCli("start", [], { ...env, PORT: "99999", WEBHOOK_TIMEOUT_MS: "-1" });
  expect(await bad.exited).toBe(1);
  expect(bad.output()).toMatch(/PORT: must be 0..65535/);
  expect(bad.output()).toMatch(/WEBHOOK_TIMEOUT_MS: must be positive/);
});
