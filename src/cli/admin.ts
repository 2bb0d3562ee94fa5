import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../platform/config.js";
import { createLogger } from "../platform/log.js";
import { startServices } from "../app.js";
import { ApiError } from "../platform/errors.js";
import { createAdminKey, createApplication, createGrant, createStore, revokeGrant } from "../modules/admin/operations.js";
import type { Db, Environment } from "../platform/db/prisma.js";

/**
 * `npm run admin -- <command> [--flags] [--json]`. Talks to the database directly (DATABASE_URL, or the
 * embedded cluster under DATA_DIR, shared with a running server), so it works with or without the server.
 */

const USAGE = `Usage: npm run admin -- <command> [options] [--json]

Commands:
  create-store --name <name> --environment SANDBOX|PRODUCTION [--slug <slug>] [--phone <phone>]
  create-application --name <name> --environment SANDBOX|PRODUCTION --scopes <a,b,...>
  create-grant --client-id <client_id> --store <store id or code>
  revoke-grant --client-id <client_id> --store <store id or code>
  create-admin-key --name <name>
  list-stores [--environment SANDBOX|PRODUCTION]
  list-applications
`;

type Flags = Record<string, string | boolean | undefined>;

function need(flags: Flags, name: string): string {
  const v = flags[name];
  if (typeof v !== "string" || v === "") throw new UsageError(`--${name} is required`);
  return v;
}

function environment(flags: Flags): Environment {
  const v = need(flags, "environment").toUpperCase();
  if (v !== "SANDBOX" && v !== "PRODUCTION") throw new UsageError("--environment must be SANDBOX or PRODUCTION");
  return v;
}

class UsageError extends Error {}

const commands: Record<string, (db: Db, flags: Flags) => Promise<{ json: unknown; text: string }>> = {
  "create-store": async (db, f) => {
    const s = await createStore(db, {
      name: need(f, "name"),
      environment: environment(f),
      slug: f.slug as string | undefined,
      phone: f.phone as string | undefined,
    });
    return {
      json: { id: s.id, code: s.code, name: s.name, slug: s.slug, environment: s.environment },
      text: `store ${s.id}\n  code (tenant_id): ${s.code}\n  name: ${s.name}\n  environment: ${s.environment}`,
    };
  },
  "create-application": async (db, f) => {
    const scopes = need(f, "scopes")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    const { application: a, clientSecret } = await createApplication(db, { name: need(f, "name"), environment: environment(f), scopes });
    return {
      json: { id: a.id, clientId: a.clientId, clientSecret, environment: a.environment, scopes: a.scopes },
      text: `application ${a.id}\n  client_id: ${a.clientId}\n  client_secret: ${clientSecret}   (shown once)\n  scopes: ${a.scopes.join(" ")}`,
    };
  },
  "create-grant": async (db, f) => {
    const g = await createGrant(db, { clientId: need(f, "client-id"), storeId: need(f, "store") });
    return { json: { id: g.id, status: g.status }, text: `grant ${g.id} ${g.status}` };
  },
  "revoke-grant": async (db, f) => {
    const g = await revokeGrant(db, { clientId: need(f, "client-id"), storeId: need(f, "store") });
    return { json: { id: g.id, status: g.status }, text: `grant ${g.id} ${g.status}` };
  },
  "create-admin-key": async (db, f) => {
    const k = await createAdminKey(db, need(f, "name"));
    return { json: k, text: `admin key ${k.id}\n  key: ${k.key}   (shown once)` };
  },
  "list-stores": async (db, f) => {
    const where = f.environment ? { environment: environment(f) } : {};
    const stores = await db.store.findMany({ where, orderBy: { createdAt: "asc" }, select: { id: true, code: true, name: true, environment: true } });
    return { json: stores, text: stores.map((s) => `${s.id}  ${s.code}  ${s.environment.padEnd(10)}  ${s.name}`).join("\n") || "(no stores)" };
  },
  "list-applications": async (db) => {
    const apps = await db.application.findMany({
      orderBy: { createdAt: "asc" },
      select: { id: true, clientId: true, name: true, environment: true, scopes: true, status: true },
    });
    return {
      json: apps,
      text:
        apps.map((a) => `${a.clientId}  ${a.environment.padEnd(10)}  ${a.status.padEnd(8)}  ${a.name}  [${a.scopes.join(" ")}]`).join("\n") ||
        "(no applications)",
    };
  },
};

async function main(): Promise<number> {
  const [command, ...rest] = process.argv.slice(2);
  const { values } = parseArgs({
    args: rest,
    strict: true,
    options: {
      name: { type: "string" },
      environment: { type: "string" },
      slug: { type: "string" },
      phone: { type: "string" },
      scopes: { type: "string" },
      "client-id": { type: "string" },
      store: { type: "string" },
      json: { type: "boolean" },
    },
  });
  const run = command ? commands[command] : undefined;
  if (!run) {
    process.stderr.write(command ? `Unknown command "${command}".\n\n${USAGE}` : USAGE);
    return 2;
  }
  const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? "warn" });
  const started = await startServices(config, createLogger(config.LOG_LEVEL));
  try {
    const out = await run(started.services.db, values);
    process.stdout.write(`${values.json ? JSON.stringify(out.json, null, 2) : out.text}\n`);
    return 0;
  } finally {
    await started.close();
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    if (e instanceof ApiError || e instanceof UsageError || e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      if (e instanceof UsageError) process.stderr.write(`\n${USAGE}`);
      process.exit(e instanceof UsageError ? 2 : 1);
    }
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
