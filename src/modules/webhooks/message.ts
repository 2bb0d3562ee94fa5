import type { Envelope } from "../events/envelope.js";
import type { ApiVersion } from "../../platform/versions.js";
import { versionEventData } from "../versions/render.js";
import { signatureHeader, standardSignature } from "./signing.js";

export const USER_AGENT = "PartnerWebhooks/1.0";

/**
 * The raw body: built from the stored event and the endpoint's API version only, so every attempt and replay of
 * one event to an endpoint that keeps its version sends the same bytes and the same `eventId` (receivers
 * deduplicate on it).
 */
export function envelopeBody(
  event: { id: string; type: string; createdAt: Date; sequence: number; data: unknown },
  tenantId: string,
  apiVersion: ApiVersion,
): string {
  const envelope: Envelope = {
    eventId: event.id,
    eventType: event.type,
    timestamp: event.createdAt.toISOString(),
    tenantId,
    sequence: event.sequence,
    data: versionEventData(apiVersion, event.type, event.data),
  };
  return JSON.stringify(envelope);
}

/**
 * Headers of one attempt. The signature is computed per attempt, so a retry hours later still
 * carries a fresh timestamp inside the receivers' tolerance. `secrets` is [current] or [current, previous].
 * Besides our own X-Service-* headers, the Standard Webhooks ones (`webhook-id` is the eventId), so the official
 * Standard Webhooks libraries verify a delivery with the secret as the partner received it.
 */
export function deliveryHeaders(opts: {
  deliveryId: string;
  eventId: string;
  eventType: string;
  body: string;
  secrets: readonly string[];
  /** The version the body is rendered in, sent as Api-Version. */
  apiVersion: ApiVersion;
  now?: Date;
}): Record<string, string> {
  const t = Math.floor((opts.now ?? new Date()).getTime() / 1000);
  const standard = standardSignature(opts.secrets, opts.eventId, t, opts.body);
  return {
    "Content-Type": "application/json",
    "User-Agent": USER_AGENT,
    "X-Service-Event-Id": opts.eventId,
    "X-Service-Event-Type": opts.eventType,
    "X-Service-Delivery-Id": opts.deliveryId,
    "Api-Version": opts.apiVersion,
    "X-Service-Signature": signatureHeader(opts.secrets, t, opts.body),
    ...(standard ? { "webhook-id": opts.eventId, "webhook-timestamp": String(t), "webhook-signature": standard } : {}),
  };
}
