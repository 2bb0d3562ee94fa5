import { Prisma } from "../../platform/db/prisma.js";

/**
 * Enqueues the event's fan-out job (`task`, payload { eventId }, job key `fan_out:<eventId>`). Plain SQL because
 * graphile_worker.add_job is a function, which Prisma can only call in raw SQL, and it must run in the caller's
 * transaction so the job commits with the event (the transactional outbox).
 */
export const enqueueFanOut = (task: string, eventId: string) =>
  Prisma.sql`select graphile_worker.add_job(${task}, json_build_object('eventId', ${eventId}::text), job_key := ${`fan_out:${eventId}`})`;
