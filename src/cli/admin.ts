import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../platform/config.js";
import { createLogger } from "../platform/log.js";
import { ApiError } from "../platform/errors.js";
import type { Services } from "../platform/services.js";
import { WEBHOOK_DELIVERY_STATUSES } from "../modules/webhooks/statuses.js";
import { ADMIN_ROLES } from "../platform/auth/admin-keys.js";
import type { AdminRole, Db, Environment, WebhookDeliveryStatus } from "../platform/db/prisma.js";

/**
 * `npm run admin -- <command> [--flags] [--json]`. Talks to the database directly (DATABASE_URL, or the
 * embedded cluster under DATA_DIR, shared with a running server), so it works with or without the server.
 * It acts with full rights: whoever can run it can reach the database anyway.
 */

// parseArgs types values of options built at run time loosely; the helpers below only take strings.
type Flags = Record<string, string | boolean | (string | boolean)[] | undefined>;
type Output = { json: unknown; text: string };
type Operations = typeof import("./admin-operations.js");

interface Command {
  /** The flags after the command name, as the help shows them. */
  args: string;
  summary: string;
  /** The command's own string flags (--json and --help are everyone's). */
  flags: readonly string[];
  run: (context: { db: Db; flags: Flags; services: Services; ops: Operations }) => Promise<Output>;
}

class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
  }
}

function need(flags: Flags, name: string): string {
  const v = flags[name];
  if (typeof v !== "string" || v === "") throw new UsageError(`--${name} is required`);
  return v;
}

function optional(flags: Flags, name: string): string | undefined {
  const v = flags[name];
  return typeof v === "string" && v !== "" ? v : undefined;
}

function oneOf<T extends string>(flags: Flags, name: string, values: readonly T[]): T {
  const v = need(flags, name).toUpperCase();
  const found = values.find((x) => x === v);
  if (!found) throw new UsageError(`--${name} must be one of ${values.map((x) => x.toLowerCase()).join(", ")}`);
  return found;
}

function environment(flags: Flags): Environment {
  return oneOf(flags, "environment", ["SANDBOX", "PRODUCTION"] as const);
}

function positiveInt(flags: Flags, name: string): number | undefined {
  const v = optional(flags, name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new UsageError(`--${name} must be a positive integer`);
  return Number(v);
}

const iso = (d: Date | null): string => (d ? d.toISOString() : "-");

const commands: Record<string, Command> = {
  "create-store": {
    args: "--name <name> --environment sandbox|production [--slug <slug>] [--phone <phone>]",
    summary: "Creates a store; prints its id and code (the partners' tenant_id).",
    flags: ["name", "environment", "slug", "phone"],
    run: async ({ db, flags: f, ops }) => {
      const s = await ops.createStore(db, { name: need(f, "name"), environment: environment(f), slug: optional(f, "slug"), phone: optional(f, "phone") });
      return {
        json: { id: s.id, code: s.code, name: s.name, slug: s.slug, environment: s.environment },
        text: `store ${s.id}\n  code (tenant_id): ${s.code}\n  name: ${s.name}\n  environment: ${s.environment}`,
      };
    },
  },
  "create-application": {
    args: "--name <name> --environment sandbox|production --scopes <a,b,...> [--api-version <version>]",
    summary: "Creates an Application, pinned to --api-version (default the latest); prints its client_id and client secret (shown once).",
    flags: ["name", "environment", "scopes", "api-version"],
    run: async ({ db, flags: f, ops }) => {
      const scopes = need(f, "scopes")
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      const { application: a, clientSecret } = await ops.createApplication(db, {
        name: need(f, "name"),
        environment: environment(f),
        scopes,
        apiVersion: optional(f, "api-version"),
      });
      return {
        json: { id: a.id, clientId: a.clientId, clientSecret, environment: a.environment, scopes: a.scopes, apiVersion: a.apiVersion },
        text: `application ${a.id}\n  client_id: ${a.clientId}\n  client_secret: ${clientSecret}   (shown once)\n  scopes: ${a.scopes.join(" ")}\n  api version: ${a.apiVersion}`,
      };
    },
  },
  "set-api-version": {
    args: "--client-id <client_id> --api-version <version>",
    summary: "Pins an Application to an API version; its next request on any process is answered in it.",
    flags: ["client-id", "api-version"],
    run: async ({ db, flags: f, ops }) => {
      const a = await ops.setApplicationApiVersion(db, need(f, "client-id"), need(f, "api-version"));
      return { json: { clientId: a.clientId, apiVersion: a.apiVersion }, text: `application ${a.clientId} api version ${a.apiVersion}` };
    },
  },
  "disable-application": {
    args: "--client-id <client_id>",
    summary: "Disables an Application: no new tokens, its issued tokens refused, no new deliveries.",
    flags: ["client-id"],
    run: async ({ db, flags: f, ops }) => {
      const a = await ops.setApplicationStatus(db, need(f, "client-id"), "DISABLED");
      return { json: { clientId: a.clientId, status: a.status }, text: `application ${a.clientId} ${a.status}` };
    },
  },
  "enable-application": {
    args: "--client-id <client_id>",
    summary: "Re-enables a disabled Application.",
    flags: ["client-id"],
    run: async ({ db, flags: f, ops }) => {
      const a = await ops.setApplicationStatus(db, need(f, "client-id"), "ACTIVE");
      return { json: { clientId: a.clientId, status: a.status }, text: `application ${a.clientId} ${a.status}` };
    },
  },
  "rotate-client-secret": {
    args: "--client-id <client_id>",
    summary: "Issues a new client secret (shown once); the old one stops working, issued tokens live until they expire.",
    flags: ["client-id"],
    run: async ({ db, flags: f, ops }) => {
      const { application: a, clientSecret } = await ops.rotateClientSecret(db, need(f, "client-id"));
      return { json: { clientId: a.clientId, clientSecret }, text: `application ${a.clientId}\n  client_secret: ${clientSecret}   (shown once)` };
    },
  },
  "create-grant": {
    args: "--client-id <client_id> --store <store id or code>",
    summary: "Lets an Application reach a store (or reactivates a revoked grant).",
    flags: ["client-id", "store"],
    run: async ({ db, flags: f, ops }) => {
      const g = await ops.createGrant(db, { clientId: need(f, "client-id"), storeId: need(f, "store") });
      return { json: { id: g.id, status: g.status }, text: `grant ${g.id} ${g.status}` };
    },
  },
  "revoke-grant": {
    args: "--client-id <client_id> --store <store id or code>",
    summary: "Revokes an Application's access to a store.",
    flags: ["client-id", "store"],
    run: async ({ db, flags: f, ops }) => {
      const g = await ops.revokeGrant(db, { clientId: need(f, "client-id"), storeId: need(f, "store") });
      return { json: { id: g.id, status: g.status }, text: `grant ${g.id} ${g.status}` };
    },
  },
  "list-grants": {
    args: "[--store <store id or code>] [--client-id <client_id>]",
    summary: "Lists grants, optionally of one store and/or one Application.",
    flags: ["store", "client-id"],
    run: async ({ db, flags: f, ops }) => {
      const grants = await ops.listGrants(db, { store: optional(f, "store"), clientId: optional(f, "client-id") });
      const json = grants.map((g) => ({
        id: g.id,
        status: g.status,
        storeId: g.store.id,
        storeCode: g.store.code,
        clientId: g.application.clientId,
        applicationStatus: g.application.status,
        createdAt: g.createdAt,
        revokedAt: g.revokedAt,
      }));
      const text = json.map((g) => `${g.id}  ${g.status.padEnd(7)}  ${g.storeCode}  ${g.clientId}  application ${g.applicationStatus}`).join("\n");
      return { json, text: text || "(no grants)" };
    },
  },
  "create-portal-link": {
    args: "--client-id <client_id> --store <store id or code> [--ttl-minutes <minutes, default 60>]",
    summary: "Prints a one-time link to the partner portal that signs in as the Application on the store.",
    flags: ["client-id", "store", "ttl-minutes"],
    run: async ({ db, flags: f, services, ops }) => {
      const link = await ops.createPortalLink(
        db,
        { clientId: need(f, "client-id"), storeId: need(f, "store"), ttlMinutes: positiveInt(f, "ttl-minutes") },
        { baseUrl: services.issuer, maxTtlMinutes: services.config.PORTAL_LINK_MAX_TTL_MINUTES, createdBy: "cli" },
      );
      return {
        json: { url: link.url, expiresAt: link.expiresAt },
        text: `portal link (one sign-in, until ${iso(link.expiresAt)}; shown once):\n  ${link.url}`,
      };
    },
  },
  "create-admin-key": {
    args: "--name <name> --role admin|support|viewer",
    summary: "Creates an admin key with a role; prints the key (shown once).",
    flags: ["name", "role"],
    run: async ({ db, flags: f, ops }) => {
      const role: AdminRole = oneOf(f, "role", ADMIN_ROLES);
      const { key, adminKey: k } = await ops.createAdminKey(db, { name: need(f, "name"), role });
      return { json: { id: k.id, name: k.name, role: k.role, prefix: k.prefix, key }, text: `admin key ${k.id} (${k.role})\n  key: ${key}   (shown once)` };
    },
  },
  "list-admin-keys": {
    args: "",
    summary: "Lists stored admin keys with their role, revoked ones too (never the keys).",
    flags: [],
    run: async ({ db, ops }) => {
      const json = (await ops.listAdminKeys(db)).map((k) => ({
        id: k.id,
        name: k.name,
        role: k.role,
        prefix: k.prefix,
        createdAt: k.createdAt,
        revokedAt: k.revokedAt,
      }));
      const text = json
        .map((k) => `${k.id}  ${k.role.padEnd(7)}  ${k.prefix}…  ${k.revokedAt ? `revoked ${iso(k.revokedAt)}` : "active"}  ${k.name}`)
        .join("\n");
      return { json, text: text || "(no admin keys)" };
    },
  },
  "revoke-admin-key": {
    args: "--id <admin key id>",
    summary: "Revokes an admin key; it is refused from its next request on.",
    flags: ["id"],
    run: async ({ db, flags: f, ops }) => {
      const k = await ops.revokeAdminKey(db, need(f, "id"));
      return { json: { id: k.id, revokedAt: k.revokedAt }, text: `admin key ${k.id} revoked at ${iso(k.revokedAt)}` };
    },
  },
  "list-stores": {
    args: "[--environment sandbox|production]",
    summary: "Lists stores.",
    flags: ["environment"],
    run: async ({ db, flags: f }) => {
      const where = optional(f, "environment") ? { environment: environment(f) } : {};
      const stores = await db.store.findMany({ where, orderBy: { createdAt: "asc" }, select: { id: true, code: true, name: true, environment: true } });
      return { json: stores, text: stores.map((s) => `${s.id}  ${s.code}  ${s.environment.padEnd(10)}  ${s.name}`).join("\n") || "(no stores)" };
    },
  },
  "list-applications": {
    args: "",
    summary: "Lists Applications.",
    flags: [],
    run: async ({ db }) => {
      const apps = await db.application.findMany({
        orderBy: { createdAt: "asc" },
        select: { id: true, clientId: true, name: true, environment: true, scopes: true, status: true, apiVersion: true },
      });
      return {
        json: apps,
        text:
          apps
            .map((a) => `${a.clientId}  ${a.environment.padEnd(10)}  ${a.status.padEnd(8)}  ${a.apiVersion}  ${a.name}  [${a.scopes.join(" ")}]`)
            .join("\n") || "(no applications)",
      };
    },
  },
  "list-deliveries": {
    args: "[--store <store id or code>] [--endpoint <endpoint id>] [--status pending|delivered|failed|dead_letter] [--limit <1-100>] [--cursor <c>]",
    summary: "Lists webhook deliveries, newest first, a page at a time.",
    flags: ["store", "endpoint", "status", "limit", "cursor"],
    run: async ({ db, flags: f, ops }) => {
      const store = optional(f, "store");
      const status: WebhookDeliveryStatus | undefined = optional(f, "status") ? oneOf(f, "status", WEBHOOK_DELIVERY_STATUSES) : undefined;
      const filter = { status, endpointId: optional(f, "endpoint") };
      const page = { limit: positiveInt(f, "limit"), cursor: optional(f, "cursor") };
      ops.deliveryListCheck.check({ ...filter, ...page });
      const deliveries = await ops.listDeliveries(db, { scope: store ? { storeId: (await ops.storeOf(db, store)).id } : {}, ...filter }, page);
      const lines = deliveries.data.map(
        (d) => `${d.id}  ${d.status.padEnd(11)}  ${String(d.httpStatus ?? "-").padEnd(3)}  ${d.attempts} att  ${d.eventType}  endpoint ${d.endpointId}`,
      );
      if (deliveries.pagination.nextCursor) lines.push(`(more: --cursor ${deliveries.pagination.nextCursor})`);
      return { json: deliveries, text: lines.join("\n") || "(no deliveries)" };
    },
  },
  "inspect-delivery": {
    args: "--id <delivery id>",
    summary: "Shows a delivery with every attempt (request, response excerpt, error).",
    flags: ["id"],
    run: async ({ db, flags: f, ops }) => {
      const delivery = await ops.findDelivery(db, null, need(f, "id"));
      const attempts = await ops.deliveryAttempts(db, delivery.id);
      const text = [
        `delivery ${delivery.id}  ${delivery.status}  ${delivery.eventType}`,
        `  event ${delivery.eventId}  endpoint ${delivery.endpointId}  store ${delivery.storeId}  application ${delivery.applicationId}`,
        `  next attempt: ${iso(delivery.nextAttemptAt)}  last error: ${delivery.lastError ?? "-"}`,
        ...attempts.map(
          (a) =>
            `  #${a.number} ${a.trigger.padEnd(9)} ${iso(a.startedAt)}  ${a.succeeded ? "ok" : "failed"}  HTTP ${a.httpStatus ?? "-"}  ${a.durationMs} ms${a.error ? `  ${a.error}` : ""}`,
        ),
      ];
      return { json: { ...delivery, attempts }, text: text.join("\n") };
    },
  },
  "replay-delivery": {
    args: "--id <delivery id>",
    summary: "Queues one more attempt of a delivery now (a worker sends it); it is PENDING until it ends.",
    flags: ["id"],
    run: async ({ db, flags: f, ops }) => {
      const id = need(f, "id");
      const [d] = await db.$transaction((tx) => ops.requestReplays(tx, null, [id], (ids) => tx.webhookDelivery.findMany({ where: { id: { in: ids } } })));
      return { json: { id: d.id, status: d.status }, text: `delivery ${d.id} ${d.status}: replay queued` };
    },
  },
};

const USAGE = `Usage: npm run admin -- <command> [options] [--json]
       npm run admin -- help <command>     (or <command> --help)

Commands:
${Object.entries(commands)
  .map(([name, c]) => `  ${name.padEnd(21)} ${c.summary}`)
  .join("\n")}

--json prints machine-readable output. Exit status: 0 done, 1 refused or failed, 2 wrong usage.
`;

function commandHelp(name: string, c: Command): string {
  return `Usage: npm run admin -- ${name} ${c.args ? `${c.args} ` : ""}[--json]\n\n${c.summary}\n`;
}

function parse(name: string, c: Command, args: string[]): Flags {
  const options = Object.fromEntries([
    ...c.flags.map((f) => [f, { type: "string" as const }]),
    ["json", { type: "boolean" as const }],
    ["help", { type: "boolean" as const, short: "h" }],
  ]);
  try {
    return parseArgs({ args, strict: true, allowPositionals: false, options }).values;
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e), name);
  }
}

async function main(): Promise<number> {
  const [first, ...rest] = process.argv.slice(2);
  if (first === "help" || first === "--help" || first === "-h") {
    const topic = first === "help" ? rest[0] : undefined;
    if (topic === undefined) {
      process.stdout.write(USAGE);
      return 0;
    }
    const c = commands[topic];
    if (!c) throw new UsageError(`Unknown command "${topic}".`);
    process.stdout.write(commandHelp(topic, c));
    return 0;
  }
  const command = first ? commands[first] : undefined;
  if (!first || !command) throw new UsageError(first ? `Unknown command "${first}".` : "Name a command.");
  const flags = parse(first, command, rest);
  if (flags.help) {
    process.stdout.write(commandHelp(first, command));
    return 0;
  }
  const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? "warn" });
  const ops = await import("./admin-operations.js");
  const started = await ops.startServices(config, createLogger(config.LOG_LEVEL));
  try {
    const out = await command.run({ db: started.services.db, flags, services: started.services, ops });
    process.stdout.write(`${flags.json ? JSON.stringify(out.json, null, 2) : out.text}\n`);
    return 0;
  } finally {
    await started.close();
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    if (e instanceof UsageError) {
      const c = e.command ? commands[e.command] : undefined;
      process.stderr.write(`${e.message}\n\n${e.command && c ? commandHelp(e.command, c) : USAGE}`);
      process.exit(2);
    }
    if (e instanceof ApiError || e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      process.exit(1);
    }
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
