import { FIRST_API_VERSION, isApiVersion } from "../../../platform/versions.js";
import type { Services } from "../../../platform/services.js";
import type { WaitOutside } from "../../../platform/outside.js";
import type { SendWebhookResult } from "../send.js";
import { deliver } from "../destinations/registry.js";
import { deliveryHeaders, envelopeBody } from "../message.js";
import { decryptSecret, type Claimed } from "./prepare.js";

/**
 * The send step: render and sign the message, then hand it to the endpoint's destination (../destinations/: a POST to
 * its re-checked URL, or a publish to its broker); and how the attempt ended, as metrics count it.
 */

export interface Sent {
  result: SendWebhookResult;
  headers: Record<string, string>;
  body: string;
  /** The URL (or broker host) failed its safety check at delivery time: nothing was sent. */
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
  const secrets = [decryptSecret(services, c.secretCiphertext)];
  if (c.previousSecretCiphertext) secrets.push(decryptSecret(services, c.previousSecretCiphertext));
  const apiVersion = isApiVersion(c.apiVersion) ? c.apiVersion : FIRST_API_VERSION;
  const body = envelopeBody({ id: c.eventId, type: c.eventType, createdAt: c.eventCreatedAt, sequence: c.eventSequence, data: c.data }, c.tenantId, apiVersion);
  // The attempt log keeps the headers sent, so it shows which version each attempt's body was rendered in.
  const headers = deliveryHeaders({ deliveryId, eventId: c.eventId, eventType: c.eventType, body, secrets, apiVersion });
  const message = { eventId: c.eventId, eventType: c.eventType, storeCode: c.tenantId, body, headers, ordered: c.ordering !== null };
  // The lookup and the send both wait on the partner's side, so both run outside.
  return waitOutside(async (): Promise<Sent> => {
    const sent = await deliver(services, c, message, (text) => decryptSecret(services, text));
    return { result: sent.result, headers: sent.headers, body, refused: sent.refused };
  });
}
