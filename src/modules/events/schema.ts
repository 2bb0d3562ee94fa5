import { type SchemaOptions, type TObject, Type } from "@sinclair/typebox";
import type { Scope } from "../../platform/auth/scopes.js";

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

/** A string from a fixed list, published as `enum` (a union of TypeBox literals would publish `anyOf` of `const`s). */
export const StringEnum = <const T extends readonly string[]>(values: T, options: SchemaOptions = {}) =>
  Type.Unsafe<T[number]>({ type: "string", enum: [...values], ...options });

export const Uuid = (options: SchemaOptions = {}) => Type.String({ format: "uuid", ...options });

/** customer.updated and store.updated name the fields the change set. */
export const ChangedFields = Type.Array(Type.String(), { description: "Names of the fields that changed" });
