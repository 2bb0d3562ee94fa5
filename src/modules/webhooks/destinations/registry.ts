import { performance } from "node:perf_hooks";
import type { Services } from "../../../platform/services.js";
import { tracer } from "../../../platform/tracing/tracer.js";
import { checkHost, type WebhookEnvironment } from "../url-safety.js";
import { Connections, TimeoutError } from "./connections.js";
import { deliverHttp, refusedAt } from "./http.js";
import { awsSqs } from "./aws-sqs.js";
import { gcpPubsub } from "./gcp-pubsub.js";
import { mqtt } from "./mqtt.js";
import { nats } from "./nats.js";
import { rabbitmq } from "./rabbitmq.js";
import { errorText, type Delivered, type Destination, type DestinationMessage, type DestinationType } from "./types.js";

/** Every broker type by name; http, the default, is the POST of ../send.ts (./http.ts). */
export const BROKERS: Record<Exclude<DestinationType, "http">, Destination<unknown>> = { rabbitmq, nats, mqtt, gcp_pubsub: gcpPubsub, aws_sqs: awsSqs };

/** Where one delivery goes, as the claim reads it from its endpoint. */
export interface DeliveryTarget {
  type: string;
  url: string;
  environment: WebhookEnvironment;
  /** A broker endpoint's settings, encrypted; null for http. */
  destinationCiphertext: string | null;
}

const pools = new WeakMap<Services, Connections>();

function poolOf(services: Services): Connections {
  let pool = pools.get(services);
  if (!pool) {
    pool = new Connections(services.config.WEBHOOK_DESTINATION_IDLE_MS);
    pools.set(services, pool);
  }
  return pool;
}

/** Closes this process's broker connections (shutdown). */
export async function closeDestinations(services: Services): Promise<void> {
  await pools.get(services)?.close();
  pools.delete(services);
}

export function isBroker(type: string): type is Exclude<DestinationType, "http"> {
  return Object.hasOwn(BROKERS, type);
}

/**
 * Sends one message to where its endpoint points: a POST for http, a publish for a broker, on the connection this
 * process keeps for that broker (opened, after its hosts pass the network rules, when none is open).
 */
export async function deliver(
  services: Services,
  target: DeliveryTarget,
  message: DestinationMessage,
  decrypt: (ciphertext: string) => string,
): Promise<Delivered> {
  if (!isBroker(target.type) || target.destinationCiphertext === null) return deliverHttp(services, target.url, target.environment, message);
  const destination = BROKERS[target.type];
  const settings: unknown = JSON.parse(decrypt(target.destinationCiphertext));
  const timeoutMs = services.config.WEBHOOK_TIMEOUT_MS;
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let refusal: string | null = null;
  const open = async () => {
    const pinned = new Map<string, string>();
    for (const { host } of destination.hosts(settings)) {
      // Repeated at every connection: the host may resolve elsewhere now than at registration.
      const check = await checkHost(host, { allowPrivateNetworks: services.config.WEBHOOK_ALLOW_PRIVATE_NETWORKS });
      if (!check.ok) {
        refusal = `broker host refused at connect time (${check.code}): ${check.message}`;
        throw new Error(refusal);
      }
      pinned.set(host, check.addresses[0]);
    }
    return destination.connect(settings, pinned, timeoutMs);
  };
  const key = `${target.type}:${JSON.stringify(destination.connection(settings))}`;
  try {
    const publish = () => poolOf(services).publish(key, open, (p) => p.publish(settings, message), timeoutMs);
    // A PRODUCER span (OpenTelemetry's messaging conventions) where the http type has its CLIENT one; the type names the system.
    const attributes = { "messaging.system": target.type, "messaging.operation.type": "send", "messaging.message.id": message.eventId };
    const confirmation = tracer.enabled ? await tracer.trace(`send ${target.type}`, { kind: "producer", attributes }, publish) : await publish();
    return {
      result: { ok: true, status: null, durationMs: elapsed(), error: null, responseExcerpt: confirmation, timedOut: false, retryAfter: null },
      refused: false,
      headers: message.headers,
    };
  } catch (err) {
    if (refusal !== null) return refusedAt(refusal, message);
    const timedOut = err instanceof TimeoutError;
    const error = `${target.type}: ${errorText(err)}`;
    return {
      result: { ok: false, status: null, durationMs: elapsed(), error, responseExcerpt: null, timedOut, retryAfter: null },
      refused: false,
      headers: message.headers,
    };
  }
}
