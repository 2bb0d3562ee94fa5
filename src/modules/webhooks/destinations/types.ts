import { invalidRequest } from "../../../platform/errors.js";
import type { SendWebhookResult } from "../send.js";

/**
 * Where an endpoint's deliveries go, in the manner of Hookdeck Outpost's destination registry: one `Destination` per
 * type (./registry.ts lists them), each checking its own fields, masking its own secrets, naming the hosts it connects
 * to and opening a `Publisher`. Adding a type is one file here and its tests.
 */

/** The endpoint types; http is the default. Kafka waits for a broker the tests can run (docs/webhooks.md). */
export const DESTINATION_TYPES = ["http", "rabbitmq", "nats", "mqtt", "gcp_pubsub", "aws_sqs"] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];

/** One message: the webhook body in the endpoint's version, and the signature headers, as an HTTP delivery has them. */
export interface DestinationMessage {
  eventId: string;
  eventType: string;
  /** The store's code: the `{storeCode}` of templates, and the ordering key of ordered endpoints. */
  storeCode: string;
  body: string;
  headers: Record<string, string>;
  /** The endpoint is ordered (`ordering: "store"`): brokers that order by key get the store's code as the key. */
  ordered: boolean;
}

/** How one attempt ended: as an HTTP attempt reports it (a broker has no status; its confirmation is the excerpt). */
export interface Delivered {
  result: SendWebhookResult;
  /** The network rules refused the host at delivery time: nothing was sent. */
  refused: boolean;
  /** The headers as sent (an http request may add its traceparent), for the attempt log. */
  headers: Record<string, string>;
}

/** One open connection to a broker, shared by every endpoint whose settings name the same broker and credentials. */
export interface Publisher<C> {
  /** Resolves with the broker's confirmation (a message id or sequence); rejects with the broker's error. */
  publish(config: C, message: DestinationMessage): Promise<string>;
  close(): Promise<void>;
}

/** Settings as answers show them: strings, lists of them, and objects of them (credentials). */
export type Shown = Record<string, string | string[] | Record<string, string>>;

/** A broker type: its settings as the endpoint stores them (`C`, JSON, credentials included). */
export interface Destination<C> {
  type: Exclude<DestinationType, "http">;
  /** The body fields it takes (beside the endpoint's own: events, rateLimit, ...). */
  fields: readonly string[];
  /** The type's fields of a create or PATCH body, checked: 400 naming the field when one is wrong or missing. */
  validate(fields: Record<string, unknown>): C;
  /** The settings as answers show them: credentials masked. */
  display(config: C): Shown;
  /** The hosts it connects to, by field: they obey the webhook URL network rules, at registration and at every connection. */
  hosts(config: C): { field: string; host: string }[];
  /** The settings one connection is for (broker and credentials): endpoints equal in it share a connection. */
  connection(config: C): unknown;
  /** A URL naming where it publishes, credentials left out (the endpoint's `url`). */
  target(config: C): string;
  /** Opens a connection, to `pinned` (each host's checked address) where the protocol allows, within `timeoutMs`. */
  connect(config: C, pinned: ReadonlyMap<string, string>, timeoutMs: number): Promise<Publisher<C>>;
}

/** The 400 a bad destination field answers, naming it. */
export function badField(field: string, message: string) {
  return invalidRequest(`${field}: ${message}`, [{ field, code: "INVALID_VALUE", message }]);
}

const PLACEHOLDER = /\{([^{}]*)\}/g;
const KNOWN_PLACEHOLDERS = new Set(["storeCode", "eventType"]);

/** A subject, topic or routing key: a non-empty string whose `{...}` are `{storeCode}` or `{eventType}` only. */
export function template(fields: Record<string, unknown>, field: string, opts: { forbidden?: RegExp; what?: string } = {}): string {
  const value = fields[field];
  if (typeof value !== "string" || value.length === 0 || value.length > 255) throw badField(field, "must be a string of 1 to 255 characters");
  for (const [, name] of value.matchAll(PLACEHOLDER)) {
    if (!KNOWN_PLACEHOLDERS.has(name)) throw badField(field, `{${name}} is not a placeholder; use {storeCode} or {eventType}`);
  }
  const literal = value.replace(PLACEHOLDER, "x");
  if (/[{}]/.test(literal)) throw badField(field, "has an unmatched { or }");
  if (opts.forbidden?.test(literal)) throw badField(field, `must not contain ${opts.what}`);
  return value;
}

/** Fills a template's placeholders for one message. */
export function fill(value: string, message: Pick<DestinationMessage, "storeCode" | "eventType">): string {
  return value.replaceAll("{storeCode}", message.storeCode).replaceAll("{eventType}", message.eventType);
}

export function requiredString(fields: Record<string, unknown>, field: string, max = 2048): string {
  const value = fields[field];
  if (typeof value !== "string" || value.length === 0 || value.length > max) throw badField(field, `is required: a string of 1 to ${max} characters`);
  return value;
}

export function optionalString(fields: Record<string, unknown>, field: string, max = 2048): string | undefined {
  return fields[field] === undefined || fields[field] === null ? undefined : requiredString(fields, field, max);
}

/** A broker URL with one of `schemes`; its credentials (user:pass@) are allowed and kept secret. */
export function brokerUrl(fields: Record<string, unknown>, field: string, schemes: readonly string[], value: unknown = fields[field]): URL {
  if (typeof value !== "string" || value.length === 0 || value.length > 2048) throw badField(field, "is required: a URL");
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badField(field, `is not a URL; use ${schemes[0]}//host:port`);
  }
  if (!schemes.includes(url.protocol)) throw badField(field, `must use ${schemes.map((s) => `${s}//`).join(" or ")}`);
  if (hostOf(url) === "") throw badField(field, "has no host");
  return url;
}

/** A URL's host without IPv6 brackets. */
export function hostOf(url: URL): string {
  const h = url.hostname;
  return h.startsWith("[") && h.endsWith("]") ? h.slice(1, -1) : h;
}

/** A URL as answers show it: user and password masked. */
export function maskedUrl(url: URL): string {
  if (url.username === "" && url.password === "") return url.toString();
  const copy = new URL(url.toString());
  copy.username = "****";
  copy.password = "";
  return copy.toString();
}

/** A URL with its credentials left out. */
export function withoutCredentials(url: URL): string {
  const copy = new URL(url.toString());
  copy.username = "";
  copy.password = "";
  return copy.toString();
}

/** The URL to connect to: its host replaced by the checked address (kept as a name under TLS, which verifies it). */
export function pinnedUrl(url: URL, pinned: ReadonlyMap<string, string>, tls: boolean): URL {
  const address = pinned.get(hostOf(url));
  if (tls || address === undefined) return url;
  const copy = new URL(url.toString());
  copy.hostname = address.includes(":") ? `[${address}]` : address;
  return copy;
}

/** A broker's error as an attempt records it; any user:password@ it quotes is masked. */
export function errorText(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) return err.errors.map(errorText).join("; ");
  const text = err instanceof Error ? err.message || err.name : String(err);
  return text.replace(/\/\/[^/@\s]*@/g, "//****@");
}
