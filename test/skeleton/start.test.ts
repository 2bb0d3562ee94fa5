import { afterAll, beforeAll, expect, it, onTestFinished } from "vitest";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { descendants, freePort, runCli, runProcess, type SeenProcess, type ServiceProcess, stillRunning } from "../helpers/process.js";

/** `npm start` from nothing: embedded PostgreSQL, migrations, the demo credentials, and a clean restart. */

let dataDir: string;
let port: number;
let env: Record<string, string>;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "partner-start-"));
  port = await freePort();
  env = { DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1", DATABASE_URL: "", MASTER_KEY: "", DEMO: "", LOG_LEVEL: "info" };
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** Stops a server left running by a failed test the way an operator would (SIGTERM stops its embedded cluster too). */
async function stop(p: ServiceProcess): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill("SIGTERM");
  const timer = setTimeout(() => p.child.kill("SIGKILL"), 15_000);
  await p.exited;
  clearTimeout(timer);
}

/** The embedded cluster's port, remembered beside it. */
const embeddedPort = (): number => Number(readFileSync(join(dataDir, "pg.port"), "utf8"));

/** Parses every line of standard output as JSON: the log holds nothing else. */
function logLines(p: ServiceProcess): { level: number; msg: string }[] {
  return p
    .stdout()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as { level: number; msg: string });
}

it("first start creates and prints demo credentials that work, to the terminal and not the JSON log, with no warning; a second start prints nothing secret", async () => {
  const first = runCli("start", [], env);
  // Stopped whatever happens: a server left running would hold the embedded cluster the next tests start.
  onTestFinished(() => stop(first));
  await first.waitFor(/Try it:[\s\S]*public\/v1\/store/, 120_000);
  await first.waitFor(/"msg":"listening"/);
  const clientId = /client_id:\s+(\S+)/.exec(first.stderr())![1];
  const clientSecret = /client_secret:\s+(\S+)/.exec(first.stderr())![1];
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
  expect(first.output()).toMatch(/"requestId":"[0-9a-f-]{36}".*"method":"GET","path":"\/public\/v1\/store","status":200,"durationMs"/);
  const lines = logLines(first);
  for (const line of lines) expect(JSON.stringify(line)).not.toContain(clientSecret);
  expect(first.stdout()).not.toContain(access_token);
  // A default start warns about nothing: no log line at warn (40) or above, nothing on standard error but the demo.
  expect(lines.filter((l) => l.level >= 40)).toEqual([]);
  expect(first.stderr().trim()).toMatch(/^Demo SANDBOX credentials[\s\S]*\/public\/v1\/store -H "Authorization: Bearer \$TOKEN"$/);

  const second = runCli("start", [], env);
  onTestFinished(() => stop(second));
  await second.waitFor(/"msg":"listening"/, 120_000);
  expect(second.output()).not.toContain("client_secret");
  second.child.kill("SIGTERM");
  expect(await second.exited).toBe(0);

  // Without the server, the CLI starts the cluster itself.
  const created = runCli("admin", ["create-store", "--name", "Offline", "--environment", "PRODUCTION", "--json"], env);
  expect(await created.exited).toBe(0);
  expect(created.output()).toContain('"environment": "PRODUCTION"');
}, 300_000);

/** Sends `signal` to the processes of `seen` still running, then kills what is left after 10 s. */
async function cleanUp(seen: SeenProcess[]): Promise<void> {
  for (const p of stillRunning(seen)) process.kill(p.pid, "SIGTERM");
  const deadline = Date.now() + 10_000;
  while (stillRunning(seen).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  for (const p of stillRunning(seen)) process.kill(p.pid, "SIGKILL");
}

it("npm start: SIGTERM or SIGINT sent to npm stops the service and its embedded PostgreSQL, leaving no process behind", async () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    const apiPort = await freePort();
    const npm = runProcess("npm", ["start"], { ...env, PORT: String(apiPort) });
    let tree: SeenProcess[] = [];
    try {
      const deadline = Date.now() + 120_000;
      while (
        !(await fetch(`http://127.0.0.1:${apiPort}/readyz`).then(
          (r) => r.status === 200,
          () => false,
        ))
      ) {
        if (Date.now() > deadline || npm.child.exitCode !== null) throw new Error(`npm start did not become ready:\n${npm.output()}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      tree = descendants(npm.child.pid ?? 0);
      // npm, the service and embedded PostgreSQL's server processes.
      expect(tree.length, JSON.stringify(tree)).toBeGreaterThanOrEqual(3);
      npm.child.kill(signal);
      expect(await npm.exited).toBe(0);
      expect(npm.output()).toMatch(new RegExp(`"signal":"${signal}","msg":"shutting down`));
      expect(npm.output()).toMatch(/"msg":"stopped"/);
      expect(await listening(apiPort)).toBe(false);
      expect(await listening(embeddedPort())).toBe(false);
      expect(stillRunning(tree)).toEqual([]);
    } finally {
      await cleanUp(tree);
    }
  }
}, 300_000);

it("SIGTERM while the start is under way (embedded PostgreSQL already started) stops the service once it is up, leaving no process behind", async () => {
  const p = runCli("start", [], { ...env, PORT: String(await freePort()) });
  onTestFinished(() => stop(p));
  let tree: SeenProcess[] = [];
  while (!tree.some((c) => c.name === "postgres")) {
    if (p.child.exitCode !== null) throw new Error(`exited before starting PostgreSQL:\n${p.output()}`);
    await new Promise((r) => setTimeout(r, 20));
    tree = descendants(p.child.pid ?? 0);
  }
  p.child.kill("SIGTERM");
  try {
    expect(await p.exited, p.output()).toBe(0);
    expect(p.output()).toMatch(/"msg":"stopped"/);
    expect(await listening(embeddedPort())).toBe(false);
    expect(stillRunning(tree)).toEqual([]);
  } finally {
    await cleanUp(tree);
  }
}, 180_000);

/** Runs `npm start`'s service with `extra`, expects it to refuse: exit 1, one line on standard error, no stack trace. */
async function refused(extra: Record<string, string>, expected: RegExp): Promise<string> {
  const p = runCli("start", [], { ...env, PORT: String(await freePort()), ...extra });
  expect(await p.exited, p.output()).toBe(1);
  const message = p.stderr().trim();
  expect(message, p.output()).toMatch(expected);
  expect(message.split("\n"), p.output()).toHaveLength(1);
  expect(p.output()).not.toMatch(/^\s+at /m);
  return message;
}

it("refuses to start with a clear message per bad variable, without a stack trace", async () => {
  const bad = runCli("start", [], { ...env, PORT: "99999", WEBHOOK_TIMEOUT_MS: "-1" });
  expect(await bad.exited).toBe(1);
  expect(bad.output()).toMatch(/PORT: must be 0..65535/);
  expect(bad.output()).toMatch(/WEBHOOK_TIMEOUT_MS: must be positive/);
  expect(bad.output()).not.toMatch(/^\s+at /m);

  // A key that parses as JSON but is no Ed25519 key is refused here too, naming it, and its value is not repeated.
  const jwks = runCli("start", [], { ...env, JWT_PRIVATE_JWKS: JSON.stringify([{ kid: "k1", kty: "OKP", crv: "Ed25519", d: "bm90LWEta2V5", x: "eA" }]) });
  expect(await jwks.exited).toBe(1);
  expect(jwks.stderr()).toMatch(/^Invalid configuration:\n {2}JWT_PRIVATE_JWKS: key "k1" is not a valid Ed25519 key[^\n]*\n$/);
  expect(jwks.stderr()).not.toContain("bm90LWEta2V5");
}, 120_000);

it("refuses to start with one sentence naming the setting, no stack trace and no process left, when the database is unreachable, the port is taken or MASTER_KEY is wrong", async () => {
  const nowhere = `postgresql://postgres@127.0.0.1:${await freePort()}/partner`;
  await refused({ DATABASE_URL: nowhere }, /DATABASE_URL/);

  const taken = createServer();
  const takenPort = await freePort();
  await new Promise<void>((r) => taken.listen(takenPort, "127.0.0.1", r));
  try {
    await refused({ PORT: String(takenPort) }, new RegExp(`PORT ${takenPort}.*in use`));
  } finally {
    taken.close();
  }
  // It had started the embedded cluster before it found the port taken: that is stopped too.
  expect(await listening(embeddedPort())).toBe(false);

  await refused({ MASTER_KEY: randomBytes(32).toString("base64") }, /MASTER_KEY/);
  expect(await listening(embeddedPort())).toBe(false);

  // With the right key (the one this database keeps, MASTER_KEY unset) it still starts: nothing was changed.
  const again = runCli("start", [], { ...env, PORT: String(await freePort()) });
  onTestFinished(() => stop(again));
  await again.waitFor(/"msg":"listening"/, 120_000);
  again.child.kill("SIGTERM");
  expect(await again.exited).toBe(0);
}, 300_000);
