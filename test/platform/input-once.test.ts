import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { call, createTenant, graphql, type Tenant } from "../helpers/tenants.js";
import { createCatalog, createOrder } from "../helpers/fixtures.js";
import { OperationInput } from "../../src/platform/validate.js";
import { StatusChangeSchema } from "../../src/modules/orders/schemas.js";

/**
 * Each input is checked once per request on each door: REST checks the status change's path and body before it
 * runs the operation (the field's resolver then does not), GraphQL checks its arguments in the field's wrapper.
 */
let app: TestApp;
let t: Tenant;
let orderId: string;

beforeAll(async () => {
  app = await startTestApp();
  t = await createTenant(app);
  await createCatalog(app.services.db, t.storeId);
  orderId = (await createOrder(app.services.db, t.storeId, { status: "PENDING" })).id;
});
afterAll(() => app.close());

/** The validators `work` ran, by which input: the id's and the status change's body. */
async function checksDuring(work: () => Promise<void>): Promise<{ id: number; statusChange: number; total: number }> {
  const spy = vi.spyOn(OperationInput.prototype, "check");
  try {
    await work();
    const inputs = spy.mock.contexts;
    const id = inputs.filter((i) => i instanceof OperationInput && Object.keys(i.properties).join() === "id").length;
    const statusChange = inputs.filter((i) => i instanceof OperationInput && i.schema === StatusChangeSchema).length;
    return { id, statusChange, total: inputs.length };
  } finally {
    spy.mockRestore();
  }
}

it("REST checks the status change's id and body once each", async () => {
  const counts = await checksDuring(async () => {
    const r = await call(app, "PATCH", `/public/v1/orders/${orderId}/status`, { token: t.token, body: { status: "CONFIRMED" } });
    expect(r.status).toBe(200);
  });
  expect(counts).toEqual({ id: 1, statusChange: 1, total: 2 });
});

it("GraphQL checks the same arguments once each", async () => {
  const counts = await checksDuring(async () => {
    const r = await graphql(app, "mutation($id: ID!) { updateOrderStatus(id: $id, status: PREPARING) { id status } }", { id: orderId }, t.token);
    expect(r.errors).toBeUndefined();
  });
  expect(counts).toEqual({ id: 1, statusChange: 1, total: 2 });
});
