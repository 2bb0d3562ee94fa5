import type { ObjectRef } from "@pothos/core";
import { builder } from "./builder.js";
import { graphql } from "./typed.js";
import type { Page, Pagination } from "./pagination.js";

/** Pieces every read domain shares: money and the `{ data, pagination }` page type. */

/** Money is stored in integer cents and rendered as a JSON number with at most two decimals (1999 → 19.99). */
export const money = (cents: number): number => cents / 100;

/**
 * The `extensions` of a money field: its REST schema says at most two decimals, which a Float cannot. Not as
 * `multipleOf: 0.01`: in binary floating point 154.2 / 0.01 is not an integer, so default validators would
 * reject real responses; `x-decimal-places` and the description say it instead.
 */
export const MONEY = { jsonSchema: { "x-decimal-places": 2, description: "Amount with at most two decimals" } };

/** The `extensions` of a String field that carries a uuid (a foreign key exposed as text). */
export const UUID_TEXT = { jsonSchema: { format: "uuid" } };

export const PaginationRef = builder.objectRef<Pagination>("Pagination").implement({
  description: "Keyset pagination: pass nextCursor back as `cursor` for the next page.",
  fields: (t) => ({
    hasMore: t.exposeBoolean("hasMore"),
    cursor: t.exposeString("cursor", { nullable: true, description: "Same value as nextCursor (the first API version's name for it)." }),
    nextCursor: t.exposeString("nextCursor", { nullable: true, description: "Id of the last returned item; null on the last page." }),
  }),
});

/** The pagination block of every REST list (an OpenAPI component). */
export const PaginationFragment = graphql(`fragment Pagination on Pagination { hasMore nextCursor }`);

/** A page wrapper type `<Name> { data: [Item!]! pagination: Pagination! }`, the shape of every REST list. */
export function pageType<Shape extends { id: string }>(name: string, item: ObjectRef<(typeof builder)["$inferSchemaTypes"], Shape>) {
  return builder.objectRef<Page<Shape>>(name).implement({
    fields: (t) => ({
      data: t.field({ type: [item], resolve: (page) => page.data }),
      pagination: t.field({ type: PaginationRef, resolve: (page) => page.pagination }),
    }),
  });
}
