import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { runCli } from "../helpers/process.js";
import { replayJobKey } from "../../src/modules/webhooks/jobs.js";
import { call, createTenant, getToken, grantChangeSeen, graphql } from "../helpers/tenants.js";
import { FIRST_API_VERSION, LATEST_API_VERSION } from "../../src/platform/versions.js";
import { tableCounter } from "../platform/support.js";
import { randomBytes } from "node:crypto";

/** The admin CLI as operators run it: a real child process against the test server's database. */

let app: TestApp;
let env: Record<string, string>;

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_TIMEOUT_MS: "500" });
  env = { DATABASE_URL: app.databaseUrl, LOG_LEVEL: "warn", MASTER_KEY: "" };
});
afterAll(() => app.close());

async function admin(...args: string[]): Promise<{ code: number | null; out: string }> {
  return adminWith(env, ...args);
}

async function adminWith(environment: Record<string, string>, ...args: string[]): Promise<{ code: number | null; out: string; stderr: string }> {
  const p = runCli("admin", args, environment);
  const code = await p.exited;
  return { code, out: p.output(), stderr: p.stderr() };
}

async function json<T>(...args: string[]): Promise<T> {
  const { code, out } = await admin(...args, "--json");
  expect(code, out).toBe(0);
  return JSON.parse(out) as T;
}

describe("help and usage", () => {
  it("answers --help, help and help <command> for every command with exit 0; unknown commands exit 2", async () => {
    const help = await admin("--help");
    expect(help.code).toBe(0);
    const names = [...help.out.matchAll(/^ {2}([a-z-]+) {2,}/gm)].map((m) => m[1]);
    expect(names).toEqual(expect.arrayContaining(["list-grants", "disable-application", "rotate-client-secret", "list-deliveries", "replay-delivery"]));
    expect((await admin("help")).out).toBe(help.out);
    const topic = await admin("help", "list-deliveries");
    expect(topic.code).toBe(0);
    expect(topic.out).toContain("npm run admin -- list-deliveries [--store");
    // A few processes at a time: each loads the whole application.
    for (let i = 0; i < names.length; i += 4) {
      const batch = names.slice(i, i + 4);
      const answers = await Promise.all(batch.map((n) => admin(n, "--help")));
      for (const [j, a] of answers.entries()) {
        expect(a.code, a.out).toBe(0);
        expect(a.out).toContain(`npm run admin -- ${batch[j]}`);
      }
    }
    const unknown = await admin("frobnicate");
    expect(unknown.code).toBe(2);
    expect(unknown.out).toMatch(/Unknown command "frobnicate"[\s\S]*Usage:/);
    const badFlag = await admin("list-grants", "--nope");
    expect(badFlag.code).toBe(2);
    expect(badFlag.out).toContain("npm run admin -- list-grants");
    const missing = await admin("revoke-admin-key");
    expect(missing.code).toBe(2);
    expect(missing.out).toContain("--id is required");
  }, 240_000);
});

describe("commands", () => {
  it("lists grants, disables and enables an Application, rotates its secret", async () => {
    const t = await createTenant(app, { scopes: ["merchant:read"] });
    const grants = await json<{ storeCode: string; clientId: string; status: string }[]>("list-grants", "--store", t.storeCode);
    expect(grants).toEqual([expect.objectContaining({ storeCode: t.storeCode, clientId: t.clientId, status: "ACTIVE" })]);
    expect(await json<unknown[]>("list-grants", "--client-id", t.clientId)).toHaveLength(1);

    expect((await json<{ status: string }>("disable-application", "--client-id", t.clientId)).status).toBe("DISABLED");
    expect((await call(app, "GET", "/public/v1/store", { token: t.token })).status).toBe(403);
    expect((await json<{ status: string }>("enable-application", "--client-id", t.clientId)).status).toBe("ACTIVE");
    expect((await call(app, "GET", "/public/v1/store", { token: t.token })).status).toBe(200);

    const rotated = await admin("rotate-client-secret", "--client-id", t.clientId);
    expect(rotated.code).toBe(0);
    const secret = /client_secret: (\S+)/.exec(rotated.out)?.[1] ?? "";
    await expect(getToken(app, t.clientId, t.clientSecret)).rejects.toThrow(/401/);
    expect(await getToken(app, t.clientId, secret)).toBeTruthy();

    const unknown = await admin("disable-application", "--client-id", "sbx_nobody");
    expect(unknown.code).toBe(1);
    expect(unknown.out).toContain("no Application with clientId sbx_nobody");
  }, 240_000);

  it("creates an Application on a version, shows and changes its pin; the next request is answered in it", async () => {
    const created = await json<{ clientId: string; apiVersion: string }>(
      "create-application",
      "--name",
      "cli pinned",
      "--environment",
      "sandbox",
      "--scopes",
      "merchant:read",
      "--api-version",
      FIRST_API_VERSION,
    );
    expect(created.apiVersion).toBe(FIRST_API_VERSION);
    const listed = await json<{ clientId: string; apiVersion: string }[]>("list-applications");
    expect(listed.find((a) => a.clientId === created.clientId)?.apiVersion).toBe(FIRST_API_VERSION);

    const t = await createTenant(app, { scopes: ["merchant:read"], apiVersion: FIRST_API_VERSION });
    expect((await json<{ apiVersion: string }>("set-api-version", "--client-id", t.clientId, "--api-version", LATEST_API_VERSION)).apiVersion).toBe(
      LATEST_API_VERSION,
    );
    await grantChangeSeen(app);
    expect((await call(app, "GET", "/public/v1/store", { token: t.token })).headers.get("api-version")).toBe(LATEST_API_VERSION);
    const unknown = await admin("set-api-version", "--client-id", t.clientId, "--api-version", "2020-01-01");
    expect(unknown.code).toBe(1);
    expect(unknown.out).toContain("is not an API version");
  }, 240_000);

  it("creates admin keys with a role, lists them without the key, and revokes one", async () => {
    const created = await json<{ id: string; key: string; role: string }>("create-admin-key", "--name", "support desk", "--role", "viewer");
    expect(created.role).toBe("VIEWER");
    expect((await graphql(app, `{ stores { data { id } } }`, {}, created.key)).errors).toBeUndefined();
    const write = await graphql(app, `mutation { createStore(input: { name: "x", environment: SANDBOX }) { id } }`, {}, created.key);
    expect(write.errors?.[0].extensions?.code).toBe("FORBIDDEN");

    const listed = await admin("list-admin-keys", "--json");
    expect(listed.out).not.toContain(created.key);
    expect(JSON.parse(listed.out)).toEqual(expect.arrayContaining([expect.objectContaining({ id: created.id, role: "VIEWER", revokedAt: null })]));
    await json("revoke-admin-key", "--id", created.id);
    expect((await graphql(app, `{ stores { data { id } } }`, {}, created.key)).status).toBe(401);
    expect((await admin("create-admin-key", "--name", "x", "--role", "root")).code).toBe(2);
  }, 240_000);

  it("lists deliveries by store and status a page at a time, inspects one with its attempts and replays it", async () => {
    const t = await createTenant(app);
    // Nothing listens on port 9 of 127.0.0.1: every attempt fails at once.
    const endpoint = await call<{ id: string }>(app, "POST", "/public/v1/webhooks", {
      token: t.token,
      body: { url: "http://127.0.0.1:9/hook", events: ["order.created"] },
    });
    expect(endpoint.status).toBe(201);
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const sent = await graphql<{ testWebhookEndpoint: { id: string; status: string } }>(
        app,
        `mutation($id: ID!) { testWebhookEndpoint(id: $id) { id status } }`,
        {
          id: endpoint.body.id,
        },
      );
      expect(sent.data?.testWebhookEndpoint.status).toBe("FAILED");
      ids.push(sent.data!.testWebhookEndpoint.id);
    }

    type Page = { data: { id: string; status: string }[]; pagination: { nextCursor: string | null } };
    const first = await json<Page>("list-deliveries", "--store", t.storeCode, "--status", "failed", "--limit", "1");
    expect(first.data.map((d) => d.id)).toEqual([ids[1]]);
    const second = await json<Page>("list-deliveries", "--store", t.storeCode, "--limit", "1", "--cursor", first.pagination.nextCursor ?? "");
    expect(second.data.map((d) => d.id)).toEqual([ids[0]]);
    expect(second.pagination.nextCursor).toBeNull();
    expect((await json<Page>("list-deliveries", "--endpoint", endpoint.body.id, "--status", "delivered")).data).toEqual([]);

    const inspected = await json<{ id: string; attempts: { number: number; succeeded: boolean; error: string }[] }>("inspect-delivery", "--id", ids[0]);
    expect(inspected.attempts).toEqual([expect.objectContaining({ number: 1, succeeded: false })]);
    const text = await admin("inspect-delivery", "--id", ids[0]);
    expect(text.out).toMatch(/#1 TEST/);

    expect((await json<{ status: string }>("replay-delivery", "--id", ids[0])).status).toBe("PENDING");
    const { rows } = await app.services.pool.query("select 1 from graphile_worker.jobs where key = $1", [replayJobKey(ids[0])]);
    expect(rows).toHaveLength(1);
    expect((await admin("inspect-delivery", "--id", "5a4c1e2e-9d1b-4f7e-8a51-3b2f0c9d7e61")).code).toBe(1);
  }, 240_000);
});

describe("the master key", () => {
  /** Refused: exit 1, one sentence on standard error naming MASTER_KEY, no stack trace. */
  function expectRefused(r: { code: number | null; out: string; stderr: string }): void {
    expect(r.code, r.out).toBe(1);
    expect(r.stderr.trim().split("\n"), r.out).toHaveLength(1);
    expect(r.stderr).toMatch(/^MASTER_KEY .*: set MASTER_KEY to /);
    expect(r.out).not.toMatch(/^\s+at /m);
  }

  it("a MASTER_KEY that does not open the stored secrets stops the CLI with one sentence, exit 1, and writes nothing", async () => {
    const counts = await tableCounter(app);
    const before = await counts();
    const kept = await app.services.db.systemSecret.findUniqueOrThrow({ where: { name: "master_key" } });
    expectRefused(await adminWith({ ...env, MASTER_KEY: randomBytes(32).toString("base64") }, "create-store", "--name", "Never", "--environment", "sandbox"));
    expect(await counts()).toEqual(before);
    expect(await app.services.db.systemSecret.findUniqueOrThrow({ where: { name: "master_key" } })).toEqual(kept);
  }, 60_000);

  it("a database whose secrets were encrypted under a MASTER_KEY it does not keep never gets a key generated: without MASTER_KEY the CLI refuses", async () => {
    const key = randomBytes(32).toString("base64");
    const keyed = await startTestApp({ MASTER_KEY: key });
    try {
      const keptKey = () => keyed.services.db.systemSecret.findUnique({ where: { name: "master_key" } });
      expect(await keptKey()).toBeNull();
      const without = { ...env, DATABASE_URL: keyed.databaseUrl };
      expectRefused(await adminWith(without, "list-stores"));
      expect(await keptKey()).toBeNull();
      // With its key, it works.
      const listed = await adminWith({ ...without, MASTER_KEY: key }, "list-stores", "--json");
      expect(listed.code, listed.out).toBe(0);
      expect(await keptKey()).toBeNull();
    } finally {
      await keyed.close();
    }
  }, 60_000);
});
