-- No read filters or orders events by store and time: the feed, the sandbox and the fan-out read by
-- (storeId, sequence) or by id, and the retention sweep by createdAt alone. The index only cost every event an
-- entry (order writes emit one to three events each).
DROP INDEX "Event_storeId_createdAt_idx";
