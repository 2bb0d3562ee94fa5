import amqp from "amqplib";
import { badField, brokerUrl, errorText, fill, hostOf, maskedUrl, pinnedUrl, template, withoutCredentials, type Destination, type Publisher } from "./types.js";

/**
 * RabbitMQ (AMQP 0-9-1): each message is published to `exchange` with `routingKey` on a confirm channel, persistent, its
 * signature headers as AMQP headers; an attempt succeeds on the broker's publisher confirm. `exchange` "" is the
 * default exchange (the routing key names a queue).
 */
export interface RabbitMqConfig {
  url: string;
  exchange: string;
  routingKey: string;
}

const SCHEMES = ["amqp:", "amqps:"] as const;

export const rabbitmq: Destination<RabbitMqConfig> = {
  type: "rabbitmq",
  fields: ["url", "exchange", "routingKey"],
  validate(fields) {
    const url = brokerUrl(fields, "url", SCHEMES);
    const exchange = fields.exchange;
    if (typeof exchange !== "string" || exchange.length > 255)
      throw badField("exchange", 'is required: a string of up to 255 characters ("" is the default exchange)');
    return { url: url.toString(), exchange, routingKey: template(fields, "routingKey") };
  },
  display: (c) => ({ url: maskedUrl(new URL(c.url)), exchange: c.exchange, routingKey: c.routingKey }),
  hosts: (c) => [{ field: "url", host: hostOf(new URL(c.url)) }],
  connection: (c) => c.url,
  target: (c) => withoutCredentials(new URL(c.url)),
  async connect(settings, pinned, timeoutMs) {
    const url = new URL(settings.url);
    const tls = url.protocol === "amqps:";
    const connection = await amqp.connect(pinnedUrl(url, pinned, tls).toString(), {
      timeout: timeoutMs,
      ...(tls ? { servername: hostOf(url) } : {}),
      clientProperties: { connection_name: "partner-webhooks" },
    });
    // A broker that closes the connection fails the attempts in flight; the pool drops it and the next attempt reconnects.
    connection.on("error", () => undefined);
    let channel: Promise<amqp.ConfirmChannel> | null = null;
    let closedWith: string | null = null;
    const open = (): Promise<amqp.ConfirmChannel> => {
      channel ??= connection.createConfirmChannel().then((ch) => {
        // A refused publish (no such exchange) closes the channel with the broker's reason: the attempt reports it.
        ch.on("error", (err: unknown) => {
          closedWith = errorText(err);
        });
        ch.on("close", () => {
          channel = null;
        });
        return ch;
      });
      return channel;
    };
    const publisher: Publisher<RabbitMqConfig> = {
      async publish(c, message) {
        const ch = await open();
        closedWith = null;
        return new Promise<string>((resolve, reject) => {
          ch.publish(
            c.exchange,
            fill(c.routingKey, message),
            Buffer.from(message.body),
            { persistent: true, contentType: "application/json", messageId: message.eventId, type: message.eventType, headers: message.headers },
            (err: unknown) => (err ? reject(new Error(closedWith ?? errorText(err))) : resolve(`confirmed (message id ${message.eventId})`)),
          );
        });
      },
      async close() {
        await connection.close().catch(() => undefined);
      },
    };
    return publisher;
  },
};
