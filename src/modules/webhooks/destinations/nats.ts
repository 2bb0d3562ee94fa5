import { connect, headers as natsHeaders } from "@nats-io/transport-node";
import { jetstream } from "@nats-io/jetstream";
import { badField, brokerUrl, fill, hostOf, maskedUrl, pinnedUrl, template, withoutCredentials, type Destination } from "./types.js";

/**
 * NATS JetStream: each message is published to `subject` with its signature headers as NATS headers and
 * `Nats-Msg-Id` = the eventId (the stream drops a repeat within its duplicate window); an attempt succeeds on the
 * stream's ack. A subject no stream captures has no responder: a failed attempt. Credentials ride in a server URL
 * (nats://user:pass@host:4222, or nats://token@host:4222).
 */
export interface NatsConfig {
  servers: string[];
  subject: string;
}

const SCHEMES = ["nats:", "tls:"] as const;
const MAX_SERVERS = 10;

export const nats: Destination<NatsConfig> = {
  type: "nats",
  fields: ["servers", "subject"],
  validate(fields) {
    const servers = fields.servers;
    if (!Array.isArray(servers) || servers.length === 0 || servers.length > MAX_SERVERS) {
      throw badField("servers", `is required: a list of 1 to ${MAX_SERVERS} nats:// URLs`);
    }
    const urls = servers.map((s) => brokerUrl(fields, "servers", SCHEMES, s));
    const users = new Set(urls.map((u) => `${u.username}:${u.password}`));
    if (users.size > 1) throw badField("servers", "must all carry the same credentials");
    // Wildcards subscribe; a publish names one subject.
    const subject = template(fields, "subject", { forbidden: /[\s*>]/, what: "spaces or the wildcards * and >" });
    return { servers: urls.map((u) => u.toString()), subject };
  },
  display: (c) => ({ servers: c.servers.map((s) => maskedUrl(new URL(s))), subject: c.subject }),
  hosts: (c) => c.servers.map((s) => ({ field: "servers", host: hostOf(new URL(s)) })),
  connection: (c) => c.servers,
  target: (c) => withoutCredentials(new URL(c.servers[0])),
  async connect(settings, pinned, timeoutMs) {
    const urls = settings.servers.map((s) => new URL(s));
    const first = urls[0];
    const auth =
      first.password !== ""
        ? { user: decodeURIComponent(first.username), pass: decodeURIComponent(first.password) }
        : first.username !== ""
          ? { token: decodeURIComponent(first.username) }
          : {};
    const nc = await connect({
      servers: urls.map((u) => {
        const p = pinnedUrl(u, pinned, u.protocol === "tls:");
        return `${p.protocol}//${p.host}`;
      }),
      ...auth,
      timeout: timeoutMs,
      // The pool opens a new connection after a failure; a connection that drops does not linger reconnecting.
      reconnect: false,
      name: "partner-webhooks",
    });
    const js = jetstream(nc, { timeout: timeoutMs });
    return {
      async publish(c, message) {
        const h = natsHeaders();
        for (const [name, value] of Object.entries(message.headers)) h.set(name, value);
        const ack = await js.publish(fill(c.subject, message), message.body, { msgID: message.eventId, headers: h, timeout: timeoutMs });
        return `stream ${ack.stream} sequence ${ack.seq}${ack.duplicate ? " (duplicate)" : ""}`;
      },
      async close() {
        await nc.close().catch(() => undefined);
      },
    };
  },
};
