-- The sequence trigger draws the next number with a plain UPDATE of the store's counter row, and inserts the row
-- only for a store's first event. The upsert it replaces (INSERT ... ON CONFLICT DO UPDATE) made a speculative
-- index insertion and a conflict check on every event before updating. The row lock, held to the commit, still
-- orders a store's event-emitting transactions, so sequence order stays commit order.
CREATE OR REPLACE FUNCTION assign_event_sequence() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "StoreEventSequence" SET "last" = "last" + 1 WHERE "storeId" = NEW."storeId" RETURNING "last" INTO NEW."sequence";
  IF NOT FOUND THEN
    INSERT INTO "StoreEventSequence" ("storeId", "last") VALUES (NEW."storeId", 1)
    ON CONFLICT ("storeId") DO UPDATE SET "last" = "StoreEventSequence"."last" + 1
    RETURNING "last" INTO NEW."sequence";
  END IF;
  PERFORM pg_notify('store_events', NEW."storeId"::text);
  RETURN NEW;
END
$$;
