import { badField, hostOf, requiredString, type Destination } from "./types.js";

/**
 * Amazon SQS: each message is sent to `queueUrl` with the signature headers as message attributes (ten, SQS's most);
 * an attempt succeeds on the message id SQS answers. A FIFO queue (.fifo) gets MessageDeduplicationId = the eventId
 * and MessageGroupId = the store code. The access key is given with the endpoint: the client never looks for ambient
 * credentials, so it never asks a cloud metadata server. `endpoint` points at another SQS-compatible service.
 */
export interface SqsConfig {
  queueUrl: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  endpoint?: string;
}

function httpUrl(fields: Record<string, unknown>, field: string): URL {
  const value = requiredString(fields, field);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badField(field, "is not a URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw badField(field, "must use https:// (or http:// for a local service)");
  if (url.username !== "" || url.password !== "") throw badField(field, "must not hold credentials: give them in credentials");
  return url;
}

export const awsSqs: Destination<SqsConfig> = {
  type: "aws_sqs",
  fields: ["queueUrl", "region", "credentials", "endpoint"],
  validate(fields) {
    const queueUrl = httpUrl(fields, "queueUrl").toString();
    const region = requiredString(fields, "region", 50);
    if (!/^[a-z]{2}(-[a-z]+)+-\d$/.test(region)) throw badField("region", "is not an AWS region such as eu-west-1");
    const creds = fields.credentials;
    if (typeof creds !== "object" || creds === null || Array.isArray(creds)) throw badField("credentials", "are required: { accessKeyId, secretAccessKey }");
    const c = Object.fromEntries(Object.entries(creds));
    const credentials = { accessKeyId: requiredString(c, "accessKeyId", 128), secretAccessKey: requiredString(c, "secretAccessKey", 256) };
    const endpoint = fields.endpoint === undefined || fields.endpoint === null ? undefined : httpUrl(fields, "endpoint").toString();
    return { queueUrl, region, credentials, ...(endpoint ? { endpoint } : {}) };
  },
  display: (c) => ({
    queueUrl: c.queueUrl,
    region: c.region,
    credentials: { accessKeyId: `****${c.credentials.accessKeyId.slice(-4)}`, secretAccessKey: "****" },
    ...(c.endpoint ? { endpoint: c.endpoint } : {}),
  }),
  hosts: (c) => [{ field: "queueUrl", host: hostOf(new URL(c.queueUrl)) }, ...(c.endpoint ? [{ field: "endpoint", host: hostOf(new URL(c.endpoint)) }] : [])],
  target: (c) => c.queueUrl,
  connection: (c) => [c.region, c.endpoint ?? null, c.credentials],
  async connect(settings) {
    // No ambient credentials or region are looked up; this also keeps any other SDK client in the process off IMDS.
    process.env.AWS_EC2_METADATA_DISABLED ??= "true";
    // Loaded on first use, as the Pub/Sub client is: a process without SQS endpoints never needs the SDK.
    const { SendMessageCommand, SQSClient } = await import("@aws-sdk/client-sqs");
    const client = new SQSClient({
      region: settings.region,
      // A copy: the SDK marks the object it is given.
      credentials: { ...settings.credentials },
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      // One try per attempt: our retry schedule decides when to try again.
      maxAttempts: 1,
    });
    return {
      async publish(c, message) {
        const fifo = c.queueUrl.endsWith(".fifo");
        const out = await client.send(
          new SendMessageCommand({
            QueueUrl: c.queueUrl,
            MessageBody: message.body,
            MessageAttributes: Object.fromEntries(Object.entries(message.headers).map(([k, v]) => [k, { DataType: "String", StringValue: v }])),
            ...(fifo ? { MessageDeduplicationId: message.eventId, MessageGroupId: message.storeCode } : {}),
          }),
        );
        return `message id ${out.MessageId ?? "?"}`;
      },
      async close() {
        client.destroy();
      },
    };
  },
};
