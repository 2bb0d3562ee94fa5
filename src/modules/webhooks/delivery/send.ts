import { FIRST_API_VERSION, isApiVersion } from "../../../platform/versions.js";
import type { Services } from "../../../platform/services.js";
import type { WaitOutside } from "../../../platform/outside.js";
import { checkWebhookUrl } from "../url-safety.js";
import { sendWebhook, type SendWebhookResult } from "../send.js";
import { deliveryHeaders, envelopeBody } from "../message.js";
import { traceDeliveryRequest } from "../trace.js";
import { decryptSecret, type Claimed } from "./prepare.js";

/** The send step: render and sign the message, re-check the URL, POST; and how the attempt ended, as metrics count it. */

export interface Sent {
  result: SendWebhookResult;
  headers: Record<string, string>;
  body: string;
  /** The URL failed its safety check at delivery time: nothing was sent. */
  refused: boolean;
}

/**
 * How an attempt ended, as metrics count it: succeeded; failed (the receiver answered, but not 2xx, or broke off its
 * body); timeout; unreachable (no answer: refused connection, reset, TLS or DNS failure); refused (its URL
 * failed the safety check at delivery time).
 */
export const ATTEMPT_RESULTS = ["succeeded", "failed", "timeout", "unreachable", "refused"] as const;
export type AttemptResult = (typeof ATTEMPT_RESULTS)[number];

export interface AttemptReport {
  result: AttemptResult;
  seconds: number;
}

export function resultOf(sent: Sent): AttemptResult {
  if (sent.result.ok) return "succeeded";
  if (sent.refused) return "refused";
  if (sent.result.timedOut) return "timeout";
  return sent.result.status === null ? "unreachable" : "failed";
}

export async function send(services: Services, deliveryId: string, c: Claimed, waitOutside: WaitOutside): Promise<Sent> {
  const { config } = services;
  const secrets = [decryptSecret(services, c.secretCiphertext)];
  if (c.previousSecretCiphertext) secrets.push(decryptSecret(services, c.previousSecretCiphertext));
  const apiVersion = isApiVersion(c.apiVersion) ? c.apiVersion : FIRST_API_VERSION;
  const body = envelopeBody({ id: c.eventId, type: c.eventType, createdAt: c.eventCreatedAt, sequence: c.eventSequence, data: c.data }, c.tenantId, apiVersion);
  // The attempt log keeps the headers sent, so it shows which version each attempt's body was rendered in.
  const headers = deliveryHeaders({ deliveryId, eventId: c.eventId, eventType: c.eventType, body, secrets, apiVersion });
  // The lookup and the POST both wait on the partner's side, so both run outside.
  return waitOutside(async (): Promise<Sent> => {
    // Repeated at every attempt: the host may resolve elsewhere now than at registration (DNS rebinding).
    const check = await checkWebhookUrl(c.url, { environment: c.environment, allowPrivateNetworks: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS });
    if (!check.ok) {
      const error = `URL refused at delivery time (${check.code}): ${check.message}`;
      return {
        result: { ok: false, status: null, durationMs: 0, error, responseExcerpt: null, timedOut: false, retryAfter: null },
        headers,
        body,
        refused: true,
      };
    }
    const { result, headers: sent } = await traceDeliveryRequest(check.url, headers, config.WEBHOOK_SEND_TRACEPARENT, (traced) =>
      sendWebhook({ url: check.url, address: check.addresses[0], headers: traced, body, timeoutMs: config.WEBHOOK_TIMEOUT_MS }),
    );
    return { result, headers: sent, body, refused: false };
  });
}
