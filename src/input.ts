import type { Violation } from "./errors.js";

/**
 * What the database can hold, as rules both doors (REST validation and GraphQL) apply to client input, so
 * a value it cannot store is the client's 400 rather than a database error: PostgreSQL text has no NUL and
 * its UTF-8 cannot encode a lone UTF-16 surrogate (which JSON's "\ud800" escape can carry), timestamps are
 * kept to years 1 to 9999, and money is int4 cents.
 */

/** With the `u` flag a surrogate pair is one code point, so the class matches only an unpaired surrogate. */
const UNSTORABLE_TEXT = /[\0\u{D800}-\u{DFFF}]/u;

export const isStorableText = (text: string): boolean => !UNSTORABLE_TEXT.test(text);

/** Every string in `value` (object keys included) that cannot be stored, named by its path: `items[3].notes`. */
export function unstorableText(value: unknown, path = ""): Violation[] {
  const field = path || "body";
  if (typeof value === "string") {
    return isStorableText(value) ? [] : [{ field, code: "INVALID_CHARACTER", message: `${field} contains a NUL character or an unpaired surrogate` }];
  }
  if (Array.isArray(value)) return value.flatMap((item, i) => unstorableText(item, `${path}[${i}]`));
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, item]) => {
    const at = path ? `${path}.${key}` : key;
    return isStorableText(key) ? unstorableText(item, at) : [{ field: at, code: "INVALID_CHARACTER", message: "a field name contains a NUL character or an unpaired surrogate" }];
  });
}

export const MIN_YEAR = 1;
export const MAX_YEAR = 9999;

/** The instant is valid and falls in years 1 to 9999 in UTC, the time zone it is stored in. */
export function isStorableInstant(date: Date): boolean {
  const year = date.getUTCFullYear();
  return !Number.isNaN(date.getTime()) && year >= MIN_YEAR && year <= MAX_YEAR;
}

/** Money columns are int4 cents: the largest amount an order, an item or a payment can hold is 21,474,836.47. */
export const MAX_AMOUNT_CENTS = 2_147_483_647;
export const MAX_AMOUNT = MAX_AMOUNT_CENTS / 100;
