import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";
import { unpublishedEvents } from "./published-events.js";

/**
 * A fresh, migrated database for one test file, cloned from the template so files run in parallel. Dropping it
 * checks every event it holds against the published webhook schemas (./published-events.ts).
 */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const serverUrl = inject("serverUrl");
  const templateDb = inject("templateDb");
  const name = `partner_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name} template ${templateDb}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    /** Drops the database, then fails when an event in it does not match its published webhook schema. */
    drop: async () => {
      let departures: string[];
      try {
        departures = await unpublishedEvents(url.toString());
      } finally {
        const c = new pg.Client({ connectionString: serverUrl });
        await c.connect();
        await c.query(`drop database if exists ${name} with (force)`);
        await c.end();
      }
      if (departures.length > 0) {
        throw new Error(`${departures.length} event(s) do not match their published webhook schema:\n${departures.join("\n")}`);
      }
    },
  };
}
