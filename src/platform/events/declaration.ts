import { type SchemaOptions, type Static, type TObject, Type } from "@sinclair/typebox";
import type { Scope } from "../auth/scopes.js";

/**
 * How a domain declares an event beside the code that emits it: the read scope needed to subscribe to and
 * receive it, when it is emitted (published in the OpenAPI `webhooks`), and its `data` as a TypeBox schema, which
 * is both the published JSON Schema and, through `Static`, the type `emitEvent` accepts. Every field the emitting
 * code puts in `data` is declared and required.
 */
export interface EventDeclaration {
  scope: Scope;
  emitted: string;
  data: TObject;
}

/**
 * Every event a domain may emit, by type, filled by declaration merging: each domain's events.ts adds its own
 * declarations (`declare module ".../platform/events/declaration.js" { interface EventCatalog extends ... {} }`).
 * The outbox (./outbox.ts) types `emitEvent` by it without importing any domain, so a domain emits through the
 * platform and the registry of events (src/modules/events/types.ts) imports the domains, never the other way round.
 */
// biome-ignore lint/suspicious/noEmptyInterface: declared empty here, filled by each domain's declaration merging.
export interface EventCatalog {}

export type EventType = keyof EventCatalog & string;

/** The `data` an event of this type carries. */
export type EventData<T extends EventType> = EventCatalog[T] extends { data: infer D extends TObject } ? Static<D> : never;

/** A string from a fixed list, published as `enum` (a union of TypeBox literals would publish `anyOf` of `const`s). */
export const StringEnum = <const T extends readonly string[]>(values: T, options: SchemaOptions = {}) =>
  Type.Unsafe<T[number]>({ type: "string", enum: [...values], ...options });

export const Uuid = (options: SchemaOptions = {}) => Type.String({ format: "uuid", ...options });

/** customer.updated and store.updated name the fields the change set. */
export const ChangedFields = Type.Array(Type.String(), { description: "Names of the fields that changed" });

/** The OpenAPI component that is any delivered event's envelope: a `oneOf` with a discriminator on `eventType`. */
export const WEBHOOK_EVENT_COMPONENT = "WebhookEvent";

/**
 * The `extensions.jsonSchema` of what carries a whole envelope (the feed's StoreEvent, a delivery's payload):
 * its REST schema is the envelope of its event type, which its GraphQL type (data: JSON) cannot say.
 */
export const WEBHOOK_EVENT_SCHEMA = { $ref: `#/components/schemas/${WEBHOOK_EVENT_COMPONENT}` };
