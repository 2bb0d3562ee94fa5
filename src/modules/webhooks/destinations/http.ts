import type { Services } from "../../../platform/services.js";
import { checkWebhookUrl, type WebhookEnvironment } from "../url-safety.js";
import { sendWebhook } from "../send.js";
import { traceDeliveryRequest } from "../trace.js";
import type { Delivered, DestinationMessage } from "./types.js";

/**
 * The http type: a POST of the body with the signature headers to the endpoint's URL (../send.ts), the URL checked
 * again first (the host may resolve elsewhere now than at registration).
 */
export async function deliverHttp(services: Services, url: string, environment: WebhookEnvironment, message: DestinationMessage): Promise<Delivered> {
  const { config } = services;
  const check = await checkWebhookUrl(url, { environment, allowPrivateNetworks: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS });
  if (!check.ok) return refusedAt(`URL refused at delivery time (${check.code}): ${check.message}`, message);
  // A CLIENT span around the request when tracing is on; with WEBHOOK_SEND_TRACEPARENT the request carries its traceparent.
  const { result, headers } = await traceDeliveryRequest(check.url, message.headers, config.WEBHOOK_SEND_TRACEPARENT, (traced) =>
    sendWebhook({ url: check.url, address: check.addresses[0], headers: traced, body: message.body, timeoutMs: config.WEBHOOK_TIMEOUT_MS }),
  );
  return { result, refused: false, headers };
}

/** An attempt the network rules stopped before anything was sent. */
export function refusedAt(error: string, message: DestinationMessage): Delivered {
  return {
    result: { ok: false, status: null, durationMs: 0, error, responseExcerpt: null, timedOut: false, retryAfter: null },
    refused: true,
    headers: message.headers,
  };
}
