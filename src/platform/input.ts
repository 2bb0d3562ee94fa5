import { Ajv } from "ajv";
import type { Violation } from "./errors.js";
import { addFormats } from "./ajv-formats.js";

/**
 * What the database can hold, as rules both doors (REST validation and GraphQL) apply to client input, so
 * a value it cannot store is the client's 400 rather than a database error: PostgreSQL text has no NUL and
 * its UTF-8 cannot encode a lone UTF-16 surrogate (which JSON's "\ud800" escape can carry), timestamps are
 * kept to years 1 to 9999, and money is int4 cents.
 */

/** With the `u` flag a surrogate pair is one code point, so the class matches only an unpaired surrogate. */
const UNSTORABLE_TEXT = /[\0\u{D800}-\u{DFFF}]/u;

export const isStorableText = (text: string): boolean => !UNSTORABLE_TEXT.test(text);

const unstorable = (field: string, message: string): Violation => ({ field, code: "INVALID_CHARACTER", message });

/**
 * Every string in `value` (object keys included) that cannot be stored, named by its path: `items[3].notes`. It
 * walks with a stack of its own, in document order, so no nesting a client sends reaches the call stack.
 */
export function unstorableText(value: unknown, path = ""): Violation[] {
  const violations: Violation[] = [];
  const stack: { item: unknown; at: string; badKey?: true }[] = [{ item: value, at: path }];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const { item, at, badKey } = next;
    if (badKey) violations.push(unstorable(at, "a field name contains a NUL character or an unpaired surrogate"));
    else if (typeof item === "string") {
      if (!isStorableText(item)) violations.push(unstorable(at || "body", `\`${at || "body"}\` contains a NUL character or an unpaired surrogate`));
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push({ item: item[i], at: `${at}[${i}]` });
    } else if (item !== null && typeof item === "object") {
      const entries = Object.entries(item);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i];
        const field = at ? `${at}.${key}` : key;
        stack.push(isStorableText(key) ? { item: child, at: field } : { item: child, at: field, badKey: true });
      }
    }
  }
  return violations;
}

/** `"`, `\`, `[`, `]`, `{`, `}` */
const [QUOTE, BACKSLASH, OPEN_ARRAY, CLOSE_ARRAY, OPEN_OBJECT, CLOSE_OBJECT] = [0x22, 0x5c, 0x5b, 0x5d, 0x7b, 0x7d];

/** Where the string opened by the quote at `open` closes: the next quote not escaped by an odd run of backslashes. */
function stringEnd(text: string, open: number): number {
  for (let end = text.indexOf('"', open + 1); end >= 0; end = text.indexOf('"', end + 1)) {
    let before = end - 1;
    while (text.charCodeAt(before) === BACKSLASH) before--;
    if ((end - 1 - before) % 2 === 0) return end;
  }
  return -1;
}

/**
 * Whether JSON text nests arrays and objects deeper than `max` levels (`[[1]]` is two), by one pass over the
 * characters that stops at the first level too deep: deeper input is refused before a parser (V8's takes about a
 * second over a 1 MiB body of brackets) or a walker meets it. Strings are skipped whole (indexOf), their brackets
 * uncounted; text that is not JSON is left to the parser to refuse.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i);
      if (i < 0) return false;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
  }
  return false;
}

export const MIN_YEAR = 1;
export const MAX_YEAR = 9999;

/** What an instant a client sends must be, as error messages state it after "must be". */
export const INSTANT_RULE = `an ISO 8601 date-time with a zone (e.g. 2025-01-31T12:00:00.000Z) in years ${MIN_YEAR} to ${MAX_YEAR}`;

/** RFC 3339 as ajv-formats checks it (a full date, a time and a zone); the validators' own Ajv instances use parseInstant. */
const rfc3339DateTime = addFormats(new Ajv()).compile({ type: "string", format: "date-time" });

/**
 * The one parser of an ISO 8601 instant (REST's `date-time` format, GraphQL's DateTime, job payloads): RFC 3339
 * with a zone, in years 1 to 9999 in UTC, the time zone it is stored in. RFC 3339 also admits year 0000 and a
 * leap second (23:59:60), which neither a JS Date nor the database holds. Null when the text is not one.
 */
export function parseInstant(text: string): Date | null {
  if (!rfc3339DateTime(text)) return null;
  const date = new Date(text);
  const year = date.getUTCFullYear();
  return !Number.isNaN(date.getTime()) && year >= MIN_YEAR && year <= MAX_YEAR ? date : null;
}

/** Money columns are int4 cents: the largest amount an order, an item or a payment can hold is 21,474,836.47. */
export const MAX_AMOUNT_CENTS = 2_147_483_647;
export const MAX_AMOUNT = MAX_AMOUNT_CENTS / 100;
