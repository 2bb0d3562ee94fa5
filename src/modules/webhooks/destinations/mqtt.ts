import mqttClient from "mqtt";
import { brokerUrl, fill, hostOf, maskedUrl, pinnedUrl, template, withoutCredentials, type Destination } from "./types.js";

/**
 * MQTT 5: each message is published to `topic` at QoS 1 with its signature headers as user properties; an attempt
 * succeeds on the broker's PUBACK (a reason code of 0x80 or above is a refusal).
 */
export interface MqttConfig {
  url: string;
  topic: string;
}

const SCHEMES = ["mqtt:", "mqtts:"] as const;

export const mqtt: Destination<MqttConfig> = {
  type: "mqtt",
  fields: ["url", "topic"],
  validate(fields) {
    const url = brokerUrl(fields, "url", SCHEMES);
    // + and # are wildcards: a publish names one topic.
    const topic = template(fields, "topic", { forbidden: /[+#]/, what: "the wildcards + and #" });
    return { url: url.toString(), topic };
  },
  display: (c) => ({ url: maskedUrl(new URL(c.url)), topic: c.topic }),
  hosts: (c) => [{ field: "url", host: hostOf(new URL(c.url)) }],
  connection: (c) => c.url,
  target: (c) => withoutCredentials(new URL(c.url)),
  async connect(settings, pinned, timeoutMs) {
    const url = new URL(settings.url);
    const tls = url.protocol === "mqtts:";
    const at = pinnedUrl(url, pinned, tls);
    const client = await mqttClient.connectAsync(`${at.protocol}//${at.host}`, {
      protocolVersion: 5,
      clean: true,
      connectTimeout: timeoutMs,
      // The pool reconnects after a failure; the client itself does not.
      reconnectPeriod: 0,
      ...(url.username !== "" ? { username: decodeURIComponent(url.username) } : {}),
      ...(url.password !== "" ? { password: decodeURIComponent(url.password) } : {}),
      ...(tls ? { servername: hostOf(url) } : {}),
    });
    client.on("error", () => undefined);
    return {
      async publish(c, message) {
        if (!client.connected) throw new Error("connection to the MQTT broker lost");
        const packet = await client.publishAsync(fill(c.topic, message), message.body, {
          qos: 1,
          properties: { contentType: "application/json", userProperties: message.headers },
        });
        return `PUBACK (packet id ${packet?.messageId ?? "?"})`;
      },
      async close() {
        await client.endAsync(true).catch(() => undefined);
      },
    };
  },
};
