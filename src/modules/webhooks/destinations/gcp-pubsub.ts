import type { Topic } from "@google-cloud/pubsub";
import { badField, fill, optionalString, requiredString, template, type Destination } from "./types.js";

/**
 * Google Cloud Pub/Sub: each message is published to `topic` of `projectId` with the signature headers as attributes;
 * an attempt succeeds on the message id Pub/Sub answers. Ordered endpoints publish with `orderingKey` = the store code.
 * `apiEndpoint` (host:port) points at an emulator (plain text, no credentials); otherwise a service account's
 * `credentials` ({ clientEmail, privateKey }) sign the calls: the client never looks for ambient credentials, so it
 * never asks a cloud metadata server.
 */
export interface PubSubConfig {
  projectId: string;
  topic: string;
  apiEndpoint?: string;
  credentials?: { clientEmail: string; privateKey: string };
}

const GOOGLE_HOST = "pubsub.googleapis.com";

/** `host:port`, as an emulator's address is written. */
function hostPort(value: string, field: string): { host: string; port: number } {
  let url: URL;
  try {
    url = new URL(`http://${value}`);
  } catch {
    throw badField(field, "must be host:port");
  }
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  if (url.port === "" || url.pathname !== "/" || url.username !== "" || url.search !== "" || host === "") throw badField(field, "must be host:port");
  return { host, port: Number(url.port) };
}

function serviceAccount(value: unknown): PubSubConfig["credentials"] {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) throw badField("credentials", "must be { clientEmail, privateKey } of a service account");
  const fields = Object.fromEntries(Object.entries(value));
  return { clientEmail: requiredString(fields, "clientEmail", 320), privateKey: requiredString(fields, "privateKey", 16_384) };
}

export const gcpPubsub: Destination<PubSubConfig> = {
  type: "gcp_pubsub",
  fields: ["projectId", "topic", "apiEndpoint", "credentials"],
  validate(fields) {
    const projectId = requiredString(fields, "projectId", 100);
    if (!/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/.test(projectId)) throw badField("projectId", "is not a Google Cloud project id");
    // A topic name: letters, digits and - _ . ~ + %, placeholders replaced per message.
    const topic = template(fields, "topic", { forbidden: /[^A-Za-z0-9\-_.~+%]/, what: "characters other than letters, digits and - _ . ~ + %" });
    const apiEndpoint = optionalString(fields, "apiEndpoint", 300);
    if (apiEndpoint !== undefined) hostPort(apiEndpoint, "apiEndpoint");
    const credentials = serviceAccount(fields.credentials);
    if (apiEndpoint === undefined && credentials === undefined) throw badField("credentials", "are required unless apiEndpoint names an emulator");
    return { projectId, topic, ...(apiEndpoint ? { apiEndpoint } : {}), ...(credentials ? { credentials } : {}) };
  },
  display: (c) => ({
    projectId: c.projectId,
    topic: c.topic,
    ...(c.apiEndpoint ? { apiEndpoint: c.apiEndpoint } : {}),
    ...(c.credentials ? { credentials: { clientEmail: c.credentials.clientEmail, privateKey: "****" } } : {}),
  }),
  hosts: (c) => [c.apiEndpoint ? { field: "apiEndpoint", host: hostPort(c.apiEndpoint, "apiEndpoint").host } : { field: "projectId", host: GOOGLE_HOST }],
  target: (c) => `https://${c.apiEndpoint ?? GOOGLE_HOST}/v1/projects/${c.projectId}/topics/${c.topic}`,
  connection: (c) => [c.projectId, c.apiEndpoint ?? null, c.credentials ?? null],
  async connect(settings, pinned) {
    // google-auth-library would otherwise probe 169.254.169.254 when it looks for a project or credentials.
    process.env.METADATA_SERVER_DETECTION ??= "none";
    // Loaded on first use: the client brings gRPC and OpenTelemetry's core, which a process without Pub/Sub endpoints never needs.
    const { PubSub } = await import("@google-cloud/pubsub");
    const emulator = settings.apiEndpoint ? hostPort(settings.apiEndpoint, "apiEndpoint") : null;
    const pubsub = new PubSub({
      projectId: settings.projectId,
      ...(emulator ? { apiEndpoint: `${pinned.get(emulator.host) ?? emulator.host}:${emulator.port}`, emulatorMode: true } : {}),
      ...(settings.credentials ? { credentials: { client_email: settings.credentials.clientEmail, private_key: settings.credentials.privateKey } } : {}),
    });
    const topics = new Map<string, Topic>();
    return {
      async publish(c, message) {
        const name = fill(c.topic, message);
        let topic = topics.get(name);
        if (!topic) {
          // One message per publish call: the attempt is its own batch, confirmed on its own.
          topic = pubsub.topic(name, { messageOrdering: true, batching: { maxMessages: 1, maxMilliseconds: 0 } });
          topics.set(name, topic);
        }
        const id = await topic.publishMessage({
          data: Buffer.from(message.body),
          attributes: message.headers,
          ...(message.ordered ? { orderingKey: message.storeCode } : {}),
        });
        return `message id ${id}`;
      },
      async close() {
        await pubsub.close().catch(() => undefined);
      },
    };
  },
};
