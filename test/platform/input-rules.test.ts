import { describe, expect, it } from "vitest";
import { assertScalarType } from "graphql";
import { parseInstant } from "../../src/platform/input.js";
import { isUuid } from "../../src/platform/uuid.js";
import { defineQuery } from "../../src/platform/validate.js";
import { dateTime, uuid } from "../../src/platform/schemas.js";
import type { JsonSchema } from "../../src/platform/json.js";
import { schema } from "../../src/graphql/schema.js";

/** The shared input rules, and both doors (REST's JSON-schema formats, GraphQL's DateTime) applying exactly them. */

const restAccepts = (format: JsonSchema, value: string): boolean => defineQuery({ value: format }, ["value"]).accepts({ value });
const dateTimeScalar = assertScalarType(schema.getType("DateTime"));
const graphqlAccepts = (value: string): boolean => {
  try {
    dateTimeScalar.parseValue(value);
    return true;
  } catch {
    return false;
  }
};

describe("parseInstant", () => {
  const instants: [string, string][] = [
    ["0001-01-01T00:00:00.000Z", "0001-01-01T00:00:00.000Z"],
    ["9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"],
    ["2025-04-30T21:00:00-03:00", "2025-05-01T00:00:00.000Z"],
    ["2024-02-29T12:00:00+0530", "2024-02-29T06:30:00.000Z"],
    // PostgreSQL writes a timestamptz into JSON (job payloads) with microseconds; a Date keeps milliseconds.
    ["2025-01-31T12:00:00.123456+00:00", "2025-01-31T12:00:00.123Z"],
    ["2025-01-31 12:00:00z", "2025-01-31T12:00:00.000Z"],
  ];
  for (const [text, iso] of instants) {
    it(`${text} → ${iso}, accepted by both doors`, () => {
      expect(parseInstant(text)?.toISOString()).toBe(iso);
      expect([restAccepts(dateTime, text), graphqlAccepts(text)]).toEqual([true, true]);
    });
  }

  const refused = [
    "0000-12-31T23:59:59.999Z",
    "+010000-01-01T00:00:00.000Z",
    // In years 1..9999 as written, but not in UTC, where it is stored.
    "0001-01-01T00:30:00+01:00",
    "9999-12-31T23:30:00-01:00",
    "2016-12-31T23:59:60Z",
    "2025-02-29T12:00:00Z",
    "2025-13-01T10:00:00Z",
    "2025-01-01T24:00:00Z",
    "2025-01-01T10:00:00",
    "2025-01-01",
    "2025-01-01T10:00:00+05",
    "1717200000",
    "yesterday",
    "",
  ];
  for (const text of refused) {
    it(`${JSON.stringify(text)} is refused by both doors`, () => {
      expect(parseInstant(text)).toBeNull();
      expect([restAccepts(dateTime, text), graphqlAccepts(text)]).toEqual([false, false]);
    });
  }
});

describe("isUuid", () => {
  it("takes 8-4-4-4-12 hex digits in either case, and the REST uuid format takes exactly the same", () => {
    for (const id of ["8a5e6c1e-0000-4000-8000-000000000000", "8A5E6C1E-ABCD-4000-8000-00000000000F"]) {
      expect([isUuid(id), restAccepts(uuid, id)]).toEqual([true, true]);
    }
    for (const id of [
      "urn:uuid:8a5e6c1e-0000-4000-8000-000000000000",
      "{8a5e6c1e-0000-4000-8000-000000000000}",
      "8a5e6c1e000040008000000000000000",
      "8a5e6c1e-0000-4000-8000-00000000000g",
      " 8a5e6c1e-0000-4000-8000-000000000000",
    ]) {
      expect([isUuid(id), restAccepts(uuid, id)]).toEqual([false, false]);
    }
  });
});
