import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createStore } from "../../src/modules/admin/operations.js";
import { emitEvent } from "../../src/platform/events/outbox.js";

let app: TestApp;
let storeId: string;
beforeAll(async () => {
  app = await startTestApp();
  storeId = (await createStore(app.services.db, { name: "Outbox", environment: "SANDBOX" })).id;
});
afterAll(() => app.close());

async function jobsFor(eventId: string): Promise<number> {
  const { rows } = await app.services.pool.query("select count(*)::int as n from graphile_worker.jobs where key = $1", [`fan_out:${eventId}`]);
  return rows[0].n;
}

it("a committed change writes its event and its fan-out job together", async () => {
  const event = await app.services.db.$transaction((tx) => emitEvent(tx, storeId, "store.updated", { storeId, changed: ["name"] }));
  expect(await app.services.db.event.count({ where: { id: event.id } })).toBe(1);
  expect(await jobsFor(event.id)).toBe(1);
});

it("a failure after the event insert leaves no event and no job", async () => {
  let eventId = "";
  await expect(
    app.services.db.$transaction(async (tx) => {
      eventId = (await emitEvent(tx, storeId, "store.updated", { storeId, changed: ["name"] })).id;
      throw new Error("forced failure after the outbox write");
    }),
  ).rejects.toThrow("forced failure");
  expect(eventId).not.toBe("");
  expect(await app.services.db.event.count({ where: { id: eventId } })).toBe(0);
  expect(await jobsFor(eventId)).toBe(0);
});
