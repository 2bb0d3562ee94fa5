import { describe, expect, it } from "vitest";
import { decodeOrderTree, orderTreeSql } from "../../src/modules/orders/tree.js";

/**
 * The order tree's SQL and its decoder come from one list per level: a row is read back by the list it was printed
 * from, and a value of another type than its field's fails loudly instead of reaching a resolver.
 */
const at = "2026-11-26T12:00:00.000+00:00";
const order = (overrides: Record<number, unknown> = {}): unknown[] => {
  const row: unknown[] = [
    "o1",
    "s1",
    1042,
    "DELIVERY",
    "PENDING",
    null,
    4800,
    500,
    0,
    5300,
    null,
    { street: "Rua A" },
    null,
    null,
    null,
    1,
    at,
    at,
    null,
    [["i1", null, "Pizza", 2, 1000, 2000, null, 0, [["a1", "Cheese", 1, 200]]]],
    null,
  ];
  for (const [i, v] of Object.entries(overrides)) row[Number(i)] = v;
  return row;
};

describe("the order tree's decoder", () => {
  it("reads a row as its list says, children carrying their parent's id", () => {
    const tree = decodeOrderTree(order());
    expect(tree).toMatchObject({ id: "o1", orderNumber: 1042, status: "PENDING", customer: null, payments: [], createdAt: new Date(at) });
    expect(tree.items[0]).toMatchObject({ id: "i1", orderId: "o1", additionals: [{ id: "a1", orderItemId: "i1", name: "Cheese" }] });
    expect(tree).not.toHaveProperty("statusHistory");
    expect(decodeOrderTree([...order(), [["h1", "PENDING", null, at]]]).statusHistory).toEqual([
      { id: "h1", orderId: "o1", status: "PENDING", reason: null, at: new Date(at) },
    ]);
  });

  it("refuses a value of another type than its field's", () => {
    expect(() => decodeOrderTree(order({ 2: "1042" }))).toThrow(/order tree: unexpected value "1042"/);
    expect(() => decodeOrderTree(order({ 4: "LOST" }))).toThrow(/order tree: unexpected value "LOST"/);
    expect(() => decodeOrderTree("not a row")).toThrow(/order tree/);
  });

  it("prints the history only when asked, after the order's values", () => {
    expect(orderTreeSql(false)).not.toContain('"OrderStatusHistory"');
    expect(orderTreeSql(true)).toMatch(/"Payment" p where p\."orderId" = o\."id"\), \(select json_agg\(json_build_array\(h\."id"/);
  });
});
