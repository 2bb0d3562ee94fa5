-- AlterTable
ALTER TABLE "WebhookEndpoint" ADD COLUMN     "rateLimit" INTEGER NOT NULL DEFAULT 50;

-- CreateTable
CREATE TABLE "PaceCursor" (
    "key" TEXT NOT NULL,
    "second" BIGINT NOT NULL,
    "used" INTEGER NOT NULL,

    CONSTRAINT "PaceCursor_pkey" PRIMARY KEY ("key")
);


-- Reserves slots of paced keys for every process sharing the database (src/platform/pace/): for each key, wants[i]
-- slots in order from its cursor (the first free slot of the current second, or of a second ahead when slots were
-- reserved for later), at most limits[i] per second, then up to spares[i] more of the current second only (a
-- process's lease, used without asking again). Answers per key where its wanted slots start and how many spare ones
-- it got, with the database's clock (clock_timestamp, read once the key's row is locked). Rows are locked in key
-- order, so reservations sharing keys never deadlock. A function so that all of it is one round trip.
CREATE FUNCTION pace_reserve(keys text[], limits int[], wants int[], spares int[])
RETURNS TABLE (slot_key text, now_ms bigint, start_second bigint, start_used int, extra int)
LANGUAGE plpgsql AS $$
DECLARE
  i int;
  cur_second bigint;
  cur_used int;
  now_s bigint;
  total int;
  end_second bigint;
  end_used int;
BEGIN
  FOR i IN SELECT k.o FROM unnest(keys) WITH ORDINALITY AS k(v, o) ORDER BY k.v LOOP
    slot_key := keys[i];
    INSERT INTO "PaceCursor" (key, second, used) VALUES (keys[i], 0, 0) ON CONFLICT (key) DO NOTHING;
    SELECT p.second, p.used INTO cur_second, cur_used FROM "PaceCursor" p WHERE p.key = keys[i] FOR UPDATE;
    now_ms := floor(extract(epoch FROM clock_timestamp()) * 1000);
    now_s := now_ms / 1000;
    IF cur_second < now_s THEN
      start_second := now_s;
      start_used := 0;
    ELSE
      start_second := cur_second;
      start_used := least(cur_used, limits[i]);
    END IF;
    total := start_used + wants[i];
    end_second := start_second + total / limits[i];
    end_used := total % limits[i];
    extra := CASE WHEN end_second = now_s THEN least(spares[i], limits[i] - end_used) ELSE 0 END;
    UPDATE "PaceCursor" p SET second = end_second, used = end_used + extra WHERE p.key = keys[i];
    RETURN NEXT;
  END LOOP;
END
$$;
