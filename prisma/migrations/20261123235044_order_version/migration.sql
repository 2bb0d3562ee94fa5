-- AlterTable
ALTER TABLE "Order" ADD COLUMN     "version" INTEGER NOT NULL DEFAULT 1;


-- Existing orders: one version per status they went through (the history holds the creation's PENDING too).
UPDATE "Order" o SET "version" = h.n
FROM (SELECT "orderId", count(*)::int AS n FROM "OrderStatusHistory" GROUP BY "orderId") h
WHERE h."orderId" = o.id AND h.n > 1;
