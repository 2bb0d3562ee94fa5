import { Prisma } from "../db/prisma.js";

/**
 * Inserts the events, in the order given (so the `event_sequence` trigger numbers them in that order), and adds
 * each one's fan-out job (`task`, payload { eventId }, job key `fan_out:<eventId>`) in the same statement;
 * returns the events' ids and sequences in order. `change` is the caller's change as CTEs, the last one named `changed`: the
 * events are written only if `changed` returns a row, so a change and its events make one round trip. A `fields`
 * column of `changed` (a JSON object), when it has one, overrides those keys of every event's data: what only the
 * change knows once it ran, such as the version a move made. `traceparent`, when tracing is on, is the committing
 * span's: stored with each event and carried by its fan-out job, whose span continues that trace. Plain SQL
 * because graphile_worker.add_job is a function, which Prisma can only call in raw SQL.
 */
export const insertEvents = (
  task: string,
  storeId: string,
  events: readonly { type: string; data: unknown }[],
  createdAt: Date,
  change: Prisma.Sql = Prisma.sql`changed as (select 1)`,
  traceparent: string | null = null,
) => Prisma.sql`
    with ${change},
    inserted as (
      insert into "Event" (id, "storeId", type, data, "createdAt", traceparent)
      select gen_random_uuid(), ${storeId}::uuid, e.value->>'type',
             e.value->'data' || coalesce((select to_jsonb(c)->'fields' from changed c limit 1), '{}'), ${createdAt}::timestamptz, ${traceparent}::text
      from jsonb_array_elements(${JSON.stringify(events)}::jsonb) with ordinality as e(value, n)
      where exists (select 1 from changed)
      order by e.n
      returning id, sequence
    )
    select id::text as id, sequence from inserted
    where (graphile_worker.add_job(${task}, json_strip_nulls(json_build_object('eventId', id::text, 'traceparent', ${traceparent}::text)), job_key := 'fan_out:' || id::text)).id is not null`;
