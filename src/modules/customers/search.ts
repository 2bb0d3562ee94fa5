import type { Prisma } from "../../platform/db/prisma.js";

/** Customer search: the `search` of the customer list, the same on REST and GraphQL. */

export const SEARCH_MAX_LENGTH = 100;

/**
 * A term that reads as (part of) a phone number: digits with optional +, spaces, dashes, dots and parentheses,
 * and enough digits to mean something. Only such a term is matched against phone digits, so a name search
 * that happens to hold digits ("Burst45") never returns a stranger whose phone contains them.
 */
const PHONE_LIKE = /^\+?[\d\s().-]+$/;
const PHONE_SEARCH_MIN_DIGITS = 3;

export const SEARCH_DESCRIPTION =
  "Case-insensitive substring of name or email; a phone-like term (digits with optional +, spaces, dashes, dots and " +
  `parentheses, at least ${PHONE_SEARCH_MIN_DIGITS} digits) also matches the phone's digits, however either is formatted`;

function phoneDigitsOf(search: string): string | null {
  if (!PHONE_LIKE.test(search)) return null;
  const digits = search.replace(/\D/g, "");
  return digits.length >= PHONE_SEARCH_MIN_DIGITS ? digits : null;
}

/**
 * Case-insensitive substring of name or email, or of the phone's digits when the term is phone-like. The
 * list's input has checked the term (at most SEARCH_MAX_LENGTH characters).
 */
export function searchFilter(raw: string | null | undefined): Prisma.CustomerWhereInput {
  const search = raw?.trim() ?? "";
  if (!search) return {};
  const digits = phoneDigitsOf(search);
  // Prisma hands `contains` to LIKE unescaped: without this, "%" would match every customer.
  const literal = search.replace(/[\\%_]/g, (c) => `\\${c}`);
  return {
    OR: [
      { name: { contains: literal, mode: "insensitive" } },
      { email: { contains: literal, mode: "insensitive" } },
      ...(digits ? [{ phoneDigits: { contains: digits } }] : []),
    ],
  };
}
