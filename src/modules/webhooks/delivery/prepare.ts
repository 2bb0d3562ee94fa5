import type { Services } from "../../../platform/services.js";
import type { WebhookDeliveryStatus, WebhookEndpointStatus } from "../../../platform/db/prisma.js";
import { parseInstant } from "../../../platform/input.js";
import type { WebhookEnvironment } from "../url-safety.js";
import type { DeliverPayload } from "../jobs.js";
import { MAX_SCHEDULED_ATTEMPTS, attemptLeaseMs } from "../policy.js";
import { DELIVERY_STATE, END_CHAIN, FAIL_REPLAY, WEBHOOK_CLAIM } from "../sql/claim.js";
import type { Drill, Hold } from "../drill.js";

/** The prepare step: claim the delivery and load what to send (one statement), and the endpoint secrets it signs with. */

export type AttemptRequest = DeliverPayload | { deliveryId: string; trigger: "TEST" };

export type AttemptOutcome =
  | { kind: "attempted"; succeeded: boolean; status: WebhookDeliveryStatus; attempt: number }
  | { kind: "skipped"; reason: "gone" | "not due" | "endpoint inactive" | "event expired" }
  /** Another attempt of this scheduled step holds the lease (or died holding it): come back at retryAt. */
  | { kind: "busy"; retryAt: Date }
  /** Over its endpoint's pace: put off, uncounted, to the slot reserved for it at `at` (its job runs again then). */
  | { kind: "paced"; at: Date }
  /** Held by the endpoint's fault drill: its first attempt runs at `at`. */
  | { kind: "held"; drill: Hold["drill"]; at: Date }
  /** An ordered endpoint's attempt waiting for an earlier delivery to end: its job runs again at `at`. */
  | { kind: "ordered"; at: Date }
  /** A fault drill's second send, recorded apart: the delivery's status is what its own attempts made it. */
  | { kind: "duplicated"; succeeded: boolean; attempt: number };

const ENDPOINT_INACTIVE_ERROR = "endpoint inactive";
const EVENT_EXPIRED_ERROR = "event past retention";

/** What a claim returns: everything an attempt needs to send. */
export interface Claimed {
  eventId: string;
  endpointId: string;
  storeId: string;
  applicationId: string;
  eventType: string;
  nextAttemptAt: Date | null;
  startedAt: Date;
  url: string;
  endpointStatus: WebhookEndpointStatus;
  /** Start of the endpoint's current run of failures; null while it succeeds. */
  failingSince: Date | null;
  secretCiphertext: string;
  previousSecretCiphertext: string | null;
  data: unknown;
  eventCreatedAt: Date;
  /** As float8, which pg reads as a number (a bigint arrives as text); sequences stay far below 2^53. */
  eventSequence: number;
  tenantId: string;
  environment: WebhookEnvironment;
  /** All scheduled attempts ran and none ever succeeded: the delivery is a dead letter whatever its status says. */
  chainExhausted: boolean;
  /** Deliveries per second the endpoint receives at most. */
  rateLimit: number;
  /** The API version the endpoint's deliveries are rendered in, as stored (an unknown one reads as the first). */
  apiVersion: string;
  /** lastAttemptAt before this claim stamped it (null for a first attempt), given back when the attempt is put off. */
  previousAttemptAt: Date | null;
  /** The endpoint's fault drill, as PATCH stored it; null (nearly always) when none runs. */
  drill: Drill | null;
  /** Where the endpoint's deliveries go: http, or a broker type whose settings are in destinationCiphertext. */
  type: string;
  destinationCiphertext: string | null;
  /** "store" when the store's events reach the endpoint one at a time in sequence order; null otherwise. */
  ordering: string | null;
}

/** A fault drill's second send of a delivery: an extra attempt, outside the retry chain. */
export function isDuplicate(req: AttemptRequest): boolean {
  return req.trigger === "SCHEDULED" && req.drill === "duplicate";
}

/** The due time a scheduled attempt's claim (and put-off) holds the chain to; null for extra attempts, which claim regardless. */
export function chainDueAt(req: AttemptRequest): string | null {
  return req.trigger === "SCHEDULED" && !isDuplicate(req) ? req.dueAt : null;
}

export async function claim(services: Services, req: AttemptRequest): Promise<Claimed | null> {
  const lease = attemptLeaseMs(services.config.WEBHOOK_TIMEOUT_MS);
  const { rows } = await services.pool.query<Claimed>({ ...WEBHOOK_CLAIM, values: [req.deliveryId, chainDueAt(req), lease, MAX_SCHEDULED_ATTEMPTS] });
  return rows[0] ?? null;
}

/** Why a claim found nothing to do; the rare path, so it may cost a second statement. */
export async function explainUnclaimed(services: Services, req: AttemptRequest): Promise<AttemptOutcome> {
  const { rows } = await services.pool.query<{
    status: WebhookDeliveryStatus;
    nextAttemptAt: Date | null;
    lastAttemptAt: Date | null;
    endpointStatus: string;
    eventKept: boolean;
  }>(DELIVERY_STATE, [req.deliveryId]);
  const row = rows[0];
  if (!row) return { kind: "skipped", reason: "gone" };
  // What stops the delivery: its event was swept by retention, or its endpoint is INACTIVE (a replay can send it once re-enabled).
  const stop = row.eventKept
    ? ({ reason: "endpoint inactive", error: ENDPOINT_INACTIVE_ERROR } as const)
    : ({ reason: "event expired", error: EVENT_EXPIRED_ERROR } as const);
  // A drill's second send is extra: the delivery's own attempts decide its state.
  if (isDuplicate(req)) return { kind: "skipped", reason: stop.reason };
  if (req.trigger === "SCHEDULED") {
    const due =
      (row.status === "PENDING" || row.status === "FAILED") && row.nextAttemptAt !== null && row.nextAttemptAt.getTime() === parseInstant(req.dueAt)?.getTime();
    if (!due) return { kind: "skipped", reason: "not due" };
    if (row.eventKept && row.endpointStatus !== "INACTIVE") {
      const lease = attemptLeaseMs(services.config.WEBHOOK_TIMEOUT_MS);
      return { kind: "busy", retryAt: new Date((row.lastAttemptAt?.getTime() ?? Date.now()) + lease) };
    }
    await services.pool.query(END_CHAIN, [req.deliveryId, req.dueAt, stop.error]);
    return { kind: "skipped", reason: stop.reason };
  }
  // A replay, recover or test claims unless the endpoint was disabled or the event swept after it was requested.
  await services.pool.query(FAIL_REPLAY, [req.deliveryId, stop.error, MAX_SCHEDULED_ATTEMPTS]);
  return { kind: "skipped", reason: stop.reason };
}

/**
 * Decrypted endpoint secrets by ciphertext: an endpoint's deliveries all carry the same ciphertext, so each is
 * decrypted once rather than once per attempt. A rotation stores a new ciphertext (a new entry); the map is emptied
 * when it holds SECRET_CACHE_SIZE of them.
 */
const SECRET_CACHE_SIZE = 10_000;
const secretCache = new WeakMap<Services, Map<string, string>>();
export function decryptSecret(services: Services, ciphertext: string): string {
  const cache = secretCache.get(services) ?? new Map<string, string>();
  secretCache.set(services, cache);
  let secret = cache.get(ciphertext);
  if (secret === undefined) {
    if (cache.size >= SECRET_CACHE_SIZE) cache.clear();
    secret = services.box.decrypt(ciphertext);
    cache.set(ciphertext, secret);
  }
  return secret;
}
