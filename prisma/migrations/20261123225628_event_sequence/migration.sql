-- Every event gets a per-store sequence number, strictly increasing in commit order: the insert trigger draws it
-- from StoreEventSequence with an upsert, whose row lock is held until the transaction ends, so a transaction
-- that draws a later number for the same store commits later. The trigger also notifies `store_events` (delivered
-- at commit) so live readers wake up.

-- AlterTable
ALTER TABLE "Event" ADD COLUMN     "sequence" BIGINT NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "StoreEventSequence" (
    "storeId" UUID NOT NULL,
    "last" BIGINT NOT NULL,

    CONSTRAINT "StoreEventSequence_pkey" PRIMARY KEY ("storeId")
);

-- Existing events are numbered in creation order.
UPDATE "Event" e SET "sequence" = n.seq
FROM (SELECT id, row_number() OVER (PARTITION BY "storeId" ORDER BY "createdAt", id) AS seq FROM "Event") n
WHERE e.id = n.id;

INSERT INTO "StoreEventSequence" ("storeId", "last") SELECT "storeId", max("sequence") FROM "Event" GROUP BY "storeId";

-- CreateIndex
CREATE UNIQUE INDEX "Event_storeId_sequence_key" ON "Event"("storeId", "sequence");

-- AddForeignKey
ALTER TABLE "StoreEventSequence" ADD CONSTRAINT "StoreEventSequence_storeId_fkey" FOREIGN KEY ("storeId") REFERENCES "Store"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE FUNCTION assign_event_sequence() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "StoreEventSequence" ("storeId", "last") VALUES (NEW."storeId", 1)
  ON CONFLICT ("storeId") DO UPDATE SET "last" = "StoreEventSequence"."last" + 1
  RETURNING "last" INTO NEW."sequence";
  PERFORM pg_notify('store_events', NEW."storeId"::text);
  RETURN NEW;
END
$$;

CREATE TRIGGER event_sequence BEFORE INSERT ON "Event" FOR EACH ROW EXECUTE FUNCTION assign_event_sequence();
