import { randomUUID } from "node:crypto";
import { createServer, type AddressInfo, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Runner } from "graphile-worker";
import amqp from "amqplib";
import { connect as natsConnect, type NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import mqtt from "mqtt";
import { Webhook } from "standardwebhooks";
import { PubSub } from "@google-cloud/pubsub";
import { CreateQueueCommand, ReceiveMessageCommand, SQSClient, type Message } from "@aws-sdk/client-sqs";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, type Tenant } from "../helpers/tenants.js";
import { availableBrokers, startFauxqs, startPubSubEmulator } from "../helpers/brokers.js";
import { destroyWebhookAgents } from "../../src/modules/webhooks/send.js";
import { startWorker } from "../../workers/runner.js";
import { brokerDestination } from "../../src/modules/webhooks/destinations/settings.js";
import { deliver } from "../../src/modules/webhooks/destinations/registry.js";
import { checkHost } from "../../src/modules/webhooks/url-safety.js";
import { ApiError } from "../../src/platform/errors.js";
import { startReceiver, waitFor, type Receiver } from "./receiver.js";

/**
 * Endpoints of the broker types: each publishes the webhook body with the signature headers to a real broker on
 * 127.0.0.1 (RabbitMQ, NATS JetStream, Mosquitto), consumed here and verified with the Standard Webhooks library;
 * a broker refusing or down gives failed attempts, retries and a dead letter without holding up an http endpoint.
 */

// Google's and AWS's clients must never look for a cloud metadata server (169.254.169.254).
process.env.METADATA_SERVER_DETECTION = "none";
process.env.AWS_EC2_METADATA_DISABLED = "true";
const up = await availableBrokers();
const [pubsubEmulator, sqsServer] = await Promise.all([startPubSubEmulator(), startFauxqs()]);
const run = `t${randomUUID().slice(0, 8)}`;

/** A consumed message: its body and its headers (AMQP headers, NATS headers, MQTT user properties). */
interface Consumed {
  body: string;
  headers: Record<string, string>;
}

let app: TestApp;
let worker: Runner;
let receiver: Receiver;
let t: Tenant;
const closers: (() => Promise<unknown>)[] = [];
const consumed = { rabbitmq: [] as Consumed[], nats: [] as Consumed[], mqtt: [] as Consumed[], gcp_pubsub: [] as Consumed[], aws_sqs: [] as Consumed[] };
const SQS_CREDENTIALS = { accessKeyId: "AKIATESTKEY0001", secretAccessKey: `sk-${randomUUID()}` };
let sqsQueueUrl = "";

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_RETRY_SCHEDULE: "50ms", WEBHOOK_TIMEOUT_MS: "2000" });
  receiver = await startReceiver();
  worker = await startWorker(app.services, app.databaseUrl);
  t = await createTenant(app);
  if (up.RabbitMQ) {
    const conn = await amqp.connect("amqp://guest:guest@127.0.0.1:5672");
    closers.push(() => conn.close());
    const ch = await conn.createChannel();
    await ch.assertExchange(`${run}.events`, "topic", { autoDelete: true });
    const { queue } = await ch.assertQueue("", { exclusive: true });
    await ch.bindQueue(queue, `${run}.events`, "#");
    await ch.consume(queue, (msg) => {
      if (!msg) return;
      const headers = Object.fromEntries(Object.entries(msg.properties.headers ?? {}).map(([k, v]) => [k, String(v)]));
      consumed.rabbitmq.push({ body: msg.content.toString(), headers });
    });
  }
  if (up.NATS) {
    const nc: NatsConnection = await natsConnect({ servers: "127.0.0.1:4222" });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: run, subjects: [`${run}.>`] });
    closers.push(async () => {
      await jsm.streams.delete(run);
      await nc.close();
    });
    const sub = nc.subscribe(`${run}.>`);
    void (async () => {
      for await (const m of sub) {
        const headers: Record<string, string> = {};
        for (const k of m.headers?.keys() ?? []) headers[k] = m.headers?.get(k) ?? "";
        consumed.nats.push({ body: m.string(), headers });
      }
    })();
  }
  if (up.Mosquitto) {
    const client = await mqtt.connectAsync("mqtt://127.0.0.1:1883", { protocolVersion: 5 });
    closers.push(() => client.endAsync());
    client.on("message", (_topic, payload, packet) => {
      const props = packet.properties?.userProperties ?? {};
      const headers = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, Array.isArray(v) ? v.join(",") : v]));
      consumed.mqtt.push({ body: payload.toString(), headers });
    });
    await client.subscribeAsync(`${run}/#`, { qos: 1 });
  }
  if (pubsubEmulator) {
    closers.push(() => pubsubEmulator.stop());
    const pubsub = new PubSub({ projectId: "partner-test", apiEndpoint: `127.0.0.1:${pubsubEmulator.port}`, emulatorMode: true });
    const [topic] = await pubsub.createTopic(`${run}-events`);
    const [subscription] = await topic.createSubscription(`${run}-sub`);
    subscription.on("message", (m) => {
      consumed.gcp_pubsub.push({ body: m.data.toString(), headers: { ...m.attributes } });
      m.ack();
    });
    closers.push(() => pubsub.close());
  }
  if (sqsServer) {
    closers.push(() => sqsServer.stop());
    const endpoint = `http://127.0.0.1:${sqsServer.port}`;
    const sqs = new SQSClient({ region: "us-east-1", endpoint, credentials: { ...SQS_CREDENTIALS }, maxAttempts: 1 });
    await sqs.send(new CreateQueueCommand({ QueueName: `${run}-events` }));
    sqsQueueUrl = `${endpoint}/000000000000/${run}-events`;
    let polling = true;
    closers.push(async () => {
      polling = false;
      sqs.destroy();
    });
    void (async () => {
      while (polling) {
        const out = await sqs
          .send(new ReceiveMessageCommand({ QueueUrl: sqsQueueUrl, MessageAttributeNames: ["All"], WaitTimeSeconds: 1, MaxNumberOfMessages: 10 }))
          .catch(() => ({ Messages: [] }));
        for (const m of out.Messages ?? []) {
          const headers = Object.fromEntries(Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue ?? ""]));
          consumed.aws_sqs.push({ body: m.Body ?? "", headers });
        }
      }
    })();
  }
});

afterAll(async () => {
  await worker?.stop();
  for (const close of closers) await close().catch(() => undefined);
  await receiver?.close();
  destroyWebhookAgents();
  await app?.close();
});

type Created = { id: string; secret: string; type: string; url: string; destination: Record<string, unknown> | null };
type Problem = { code: string; errors?: { field: string; code: string }[] };

const create = (body: Record<string, unknown>) => call<Created & Problem>(app, "POST", "/public/v1/webhooks", { token: t.token, body });
const fire = async (type = "customer.created") => {
  const res = await call<{ eventId: string }>(app, "POST", "/public/v1/sandbox/events", { token: t.token, body: { type } });
  expect(res.status).toBe(201);
  return res.body.eventId;
};
const feedEnvelope = async (eventId: string) => (await call(app, "GET", `/public/v1/events/${eventId}`, { token: t.token })).body;

/** The broker endpoints, by type, with where they publish and where their messages are consumed here. */
const TYPES = [
  {
    type: "rabbitmq",
    broker: "RabbitMQ",
    body: { url: "amqp://guest:guest@127.0.0.1:5672", exchange: `${run}.events`, routingKey: "{storeCode}.{eventType}" },
    consumed: () => consumed.rabbitmq,
  },
  { type: "nats", broker: "NATS", body: { servers: ["nats://127.0.0.1:4222"], subject: `${run}.{storeCode}.{eventType}` }, consumed: () => consumed.nats },
  { type: "mqtt", broker: "Mosquitto", body: { url: "mqtt://127.0.0.1:1883", topic: `${run}/{storeCode}/{eventType}` }, consumed: () => consumed.mqtt },
] as const;

/** The emulated ones: their settings are known once the emulators have started. */
const EMULATED = [
  {
    type: "gcp_pubsub",
    running: pubsubEmulator !== null,
    body: () => ({ projectId: "partner-test", topic: `${run}-events`, apiEndpoint: `127.0.0.1:${pubsubEmulator?.port}` }),
    consumed: () => consumed.gcp_pubsub,
  },
  {
    type: "aws_sqs",
    running: sqsServer !== null,
    body: () => ({ queueUrl: sqsQueueUrl, region: "us-east-1", endpoint: `http://127.0.0.1:${sqsServer?.port}`, credentials: SQS_CREDENTIALS }),
    consumed: () => consumed.aws_sqs,
  },
] as const;

const ofEvent = (list: Consumed[], eventId: string) => list.filter((m) => m.headers["webhook-id"] === eventId);

async function publishesSigned(type: string, body: Record<string, unknown>, messages: () => Consumed[]): Promise<void> {
  {
    const res = await create({ type, events: ["customer.created"], ...body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.type).toBe(type);
    // Credentials are never shown.
    expect(JSON.stringify(res.body)).not.toContain("guest:guest");
    const eventId = await fire();
    const message = await waitFor(`the ${type} message`, () => ofEvent(messages(), eventId)[0]);
    // The Standard Webhooks library verifies it with the secret as the partner received it.
    expect(new Webhook(res.body.secret).verify(message.body, message.headers)).toBeTruthy();
    expect(message.headers["x-service-event-id"] ?? message.headers["X-Service-Event-Id"]).toBe(eventId);
    expect(JSON.parse(message.body)).toEqual(await feedEnvelope(eventId));

    const delivery = await waitFor("DELIVERED", () =>
      app.services.db.webhookDelivery.findFirst({ where: { endpointId: res.body.id, eventId, status: "DELIVERED" } }),
    );
    const replay = await call(app, "POST", `/public/v1/webhooks/deliveries/${delivery.id}/replay`, { token: t.token });
    expect(replay.status).toBe(200);
    await waitFor("the replayed message", () => ofEvent(messages(), eventId).length === 2);
    const attempts = await call<{ data: { trigger: string; error: string | null }[] }>(app, "GET", `/public/v1/webhooks/deliveries/${delivery.id}/attempts`, {
      token: t.token,
    });
    await waitFor("the replay recorded", async () => (await app.services.db.webhookAttempt.count({ where: { deliveryId: delivery.id } })) === 2);
    expect(attempts.body.data[0]).toMatchObject({ trigger: "SCHEDULED", error: null });
    // Credentials never appear in an answer.
    const listed = JSON.stringify((await call(app, "GET", "/public/v1/webhooks", { token: t.token })).body);
    expect(listed).not.toContain("guest:guest");
    expect(listed).not.toContain(SQS_CREDENTIALS.secretAccessKey);
  }
}

const PUBLISHES = "publishes each event signed, the body the feed's envelope; a replay publishes it again";

describe.each(TYPES)("a $type endpoint", ({ type, broker, body, consumed: messages }) => {
  it.skipIf(!up[broker])(PUBLISHES, () => publishesSigned(type, body, messages));
});

describe.each(EMULATED)("a $type endpoint", ({ type, running, body, consumed: messages }) => {
  it.skipIf(!running)(PUBLISHES, () => publishesSigned(type, body(), messages));
});

describe("ordered broker endpoints", () => {
  it.skipIf(!sqsServer)("an SQS FIFO queue gets MessageDeduplicationId = eventId and MessageGroupId = store code", async () => {
    const endpoint = `http://127.0.0.1:${sqsServer?.port}`;
    const sqs = new SQSClient({ region: "us-east-1", endpoint, credentials: { ...SQS_CREDENTIALS }, maxAttempts: 1 });
    await sqs.send(new CreateQueueCommand({ QueueName: `${run}-ordered.fifo`, Attributes: { FifoQueue: "true" } }));
    const queueUrl = `${endpoint}/000000000000/${run}-ordered.fifo`;
    const res = await create({
      type: "aws_sqs",
      ordering: "store",
      events: ["customer.created"],
      queueUrl,
      region: "us-east-1",
      endpoint,
      credentials: SQS_CREDENTIALS,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const eventId = await fire();
    const message = await waitFor("the FIFO message", async (): Promise<Message | undefined> => {
      const out = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MessageAttributeNames: ["All"], MessageSystemAttributeNames: ["All"], WaitTimeSeconds: 1 }),
      );
      return out.Messages?.find((m) => m.MessageAttributes?.["webhook-id"]?.StringValue === eventId);
    });
    expect(message.Attributes).toMatchObject({ MessageGroupId: t.storeCode, MessageDeduplicationId: eventId });
    sqs.destroy();
  });

  it.skipIf(!pubsubEmulator)("Pub/Sub gets orderingKey = store code", async () => {
    const pubsub = new PubSub({ projectId: "partner-test", apiEndpoint: `127.0.0.1:${pubsubEmulator?.port}`, emulatorMode: true });
    const [topic] = await pubsub.createTopic(`${run}-ordered`);
    const [subscription] = await topic.createSubscription(`${run}-ordered-sub`, { enableMessageOrdering: true });
    const keys: { id: string; key: string }[] = [];
    subscription.on("message", (m) => {
      keys.push({ id: m.attributes["webhook-id"], key: m.orderingKey ?? "" });
      m.ack();
    });
    const res = await create({
      type: "gcp_pubsub",
      ordering: "store",
      events: ["customer.created"],
      projectId: "partner-test",
      topic: `${run}-ordered`,
      apiEndpoint: `127.0.0.1:${pubsubEmulator?.port}`,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const eventId = await fire();
    const got = await waitFor("the ordered Pub/Sub message", () => keys.find((k) => k.id === eventId));
    expect(got.key).toBe(t.storeCode);
    await subscription.close();
    await pubsub.close();
  });
});

describe("broker endpoints that fail", () => {
  it.skipIf(!up.RabbitMQ)(
    "a refusing broker fails attempts with its error text, retries and dead-letters, while an http endpoint keeps receiving",
    async () => {
      const refused = await create({
        type: "rabbitmq",
        events: ["customer.created"],
        url: "amqp://guest:guest@127.0.0.1:5672",
        exchange: `${run}.missing`,
        routingKey: "x",
      });
      const password = `pw-${randomUUID()}`;
      const down = await create({ type: "mqtt", events: ["customer.created"], url: `mqtt://user:${password}@127.0.0.1:1`, topic: "never" });
      // A broker that accepts the connection and never answers: each attempt costs at most WEBHOOK_TIMEOUT_MS.
      const sockets = new Set<Socket>();
      const hung = createServer((socket) => void sockets.add(socket));
      await new Promise<void>((resolve) => hung.listen(0, "127.0.0.1", resolve));
      const hungPort = (hung.address() as AddressInfo).port;
      const hanging = await create({ type: "mqtt", events: ["customer.created"], url: `mqtt://127.0.0.1:${hungPort}`, topic: "never" });
      const http = await create({ events: ["customer.created"], url: receiver.url("/beside") });
      expect([refused.status, down.status, hanging.status, http.status]).toEqual([201, 201, 201, 201]);
      const eventId = await fire();
      await waitFor("the http endpoint's delivery", () => receiver.requests("/beside").some((r) => r.headers["webhook-id"] === eventId));
      for (const endpoint of [refused.body, down.body]) {
        const dead = await waitFor(
          "the dead letter",
          () => app.services.db.webhookDelivery.findFirst({ where: { endpointId: endpoint.id, eventId, status: "DEAD_LETTER" } }),
          15_000,
        );
        expect(dead.attempts).toBe(10);
        expect((await app.services.db.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).status).toBe("FAILED");
      }
      const refusedError = (await app.services.db.webhookDelivery.findFirstOrThrow({ where: { endpointId: refused.body.id } })).lastError;
      expect(refusedError).toMatch(/NOT.FOUND/);
      const downError = (await app.services.db.webhookDelivery.findFirstOrThrow({ where: { endpointId: down.body.id } })).lastError;
      expect(downError).toMatch(/ECONNREFUSED/);
      const timedOut = await waitFor("a timed-out attempt", () =>
        app.services.db.webhookAttempt.findFirst({ where: { delivery: { endpointId: hanging.body.id } }, orderBy: { startedAt: "asc" } }),
      );
      expect(timedOut.error).toMatch(/timeout after 2000ms/);
      expect(timedOut.durationMs).toBeLessThan(3000);
      await call(app, "DELETE", `/public/v1/webhooks/${hanging.body.id}`, { token: t.token });
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => hung.close(resolve));
      // The credentials are in no answer about the attempts (and so in no log line: those carry the same error).
      const downDelivery = await app.services.db.webhookDelivery.findFirstOrThrow({ where: { endpointId: down.body.id } });
      for (const path of [
        `/public/v1/webhooks/deliveries/${downDelivery.id}`,
        `/public/v1/webhooks/deliveries/${downDelivery.id}/attempts`,
        "/public/v1/webhooks",
      ]) {
        expect(JSON.stringify((await call(app, "GET", path, { token: t.token })).body)).not.toContain(password);
      }
    },
  );
});

describe("broker endpoint settings", () => {
  it("refuses bad settings naming the field, kafka and unknown types, metadata hosts; never shows credentials", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ type: "kafka", url: "kafka://127.0.0.1:9092", topic: "x" }, "type"],
      [{ type: "sqs2" }, "type"],
      [{ type: "rabbitmq", url: "amqp://127.0.0.1:5672", exchange: "x" }, "routingKey"],
      [{ type: "rabbitmq", url: "http://127.0.0.1:5672", exchange: "x", routingKey: "k" }, "url"],
      [{ type: "rabbitmq", url: "amqp://127.0.0.1:5672", exchange: "x", routingKey: "k", topic: "t" }, "topic"],
      [{ type: "nats", servers: ["nats://127.0.0.1:4222"], subject: "a.*" }, "subject"],
      [{ type: "nats", servers: [], subject: "a" }, "servers"],
      [{ type: "mqtt", url: "mqtt://127.0.0.1:1883", topic: "a/{store}" }, "topic"],
      [{ type: "mqtt", url: "mqtt://127.0.0.1:1883", topic: "a/#" }, "topic"],
      [{ exchange: "x" }, "exchange"],
      [{}, "url"],
    ];
    for (const [body, field] of cases) {
      const res = await create({ events: ["customer.created"], ...body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors?.[0].field, JSON.stringify(body)).toBe(field);
    }
    const metadata = await create({ type: "mqtt", events: ["customer.created"], url: "mqtt://169.254.169.254:1883", topic: "x" });
    expect(metadata.status).toBe(422);
    expect(metadata.body.errors?.[0]).toMatchObject({ field: "url", code: "PRIVATE_NETWORK" });

    const secret = `pw-${randomUUID()}`;
    const res = await create({ type: "mqtt", events: ["customer.created"], url: `mqtt://user:${secret}@127.0.0.1:1883`, topic: "x" });
    expect(res.status).toBe(201);
    expect(res.body.destination).toEqual({ url: "mqtt://****@127.0.0.1:1883", topic: "x" });
    const patched = await call(app, "PATCH", `/public/v1/webhooks/${res.body.id}`, { token: t.token, body: { topic: "y/{eventType}", ordering: "store" } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ type: "mqtt", ordering: "store", destination: { url: "mqtt://****@127.0.0.1:1883", topic: "y/{eventType}" } });
    // Other changes leave the settings alone; an http endpoint takes no broker field.
    const paused = await call(app, "PATCH", `/public/v1/webhooks/${res.body.id}`, { token: t.token, body: { status: "INACTIVE" } });
    expect(paused.body).toMatchObject({ status: "INACTIVE", destination: { topic: "y/{eventType}" } });
    const http = await create({ events: ["customer.created"], url: receiver.url("/settings") });
    const wrong = await call<Problem>(app, "PATCH", `/public/v1/webhooks/${http.body.id}`, { token: t.token, body: { topic: "x" } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors?.[0].field).toBe("topic");
    const list = await call(app, "GET", "/public/v1/webhooks", { token: t.token });
    const row = await app.services.db.webhookEndpoint.findUniqueOrThrow({ where: { id: res.body.id } });
    for (const text of [JSON.stringify(res.body), JSON.stringify(patched.body), JSON.stringify(list.body), JSON.stringify(row)])
      expect(text).not.toContain(secret);
  });
});

describe("broker hosts and the network rules", () => {
  const settings = { url: "amqp://10.1.2.3:5672", exchange: "x", routingKey: "k" };

  it("refuses a private broker host at registration without WEBHOOK_ALLOW_PRIVATE_NETWORKS, naming the field", async () => {
    const refused = await brokerDestination("rabbitmq", settings, {}, app.services.box, (host) => checkHost(host, { allowPrivateNetworks: false })).catch(
      (err: unknown) => err,
    );
    if (!(refused instanceof ApiError)) throw new Error(`expected a refusal, got ${String(refused)}`);
    expect(refused.violations?.[0]).toMatchObject({ field: "url", code: "PRIVATE_NETWORK" });
  });

  it("refuses it again at connect time, sending nothing", async () => {
    const strict = { ...app.services, config: { ...app.services.config, WEBHOOK_ALLOW_PRIVATE_NETWORKS: false } };
    const target = {
      type: "rabbitmq",
      url: "amqp://10.1.2.3:5672/",
      environment: "SANDBOX" as const,
      destinationCiphertext: app.services.box.encrypt(JSON.stringify(settings)),
    };
    const message = { eventId: randomUUID(), eventType: "customer.created", storeCode: "x", body: "{}", headers: {}, ordered: false };
    const sent = await deliver(strict, target, message, (text) => app.services.box.decrypt(text));
    expect(sent.refused).toBe(true);
    expect(sent.result.error).toMatch(/connect time \(PRIVATE_NETWORK\)/);
  });
});
