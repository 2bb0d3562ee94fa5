/**
 * Ordered endpoints (`ordering` "store"): the earliest delivery of the endpoint, by its event's sequence, that comes
 * before `$3` and is not done: PENDING (a first attempt, replay, recover or backfill not yet ended), or FAILED with a
 * retry scheduled. Delivered, dead-lettered and given-up ones are done. Deliveries whose event is past retention can
 * never be sent and are passed over. The (endpointId, status, createdAt, id) index finds the endpoint's undone ones.
 * $1 endpoint id, $2 the delivery asking (never its own blocker), $3 its event's sequence.
 */
export const EARLIER_UNDONE = {
  name: "webhook_earlier_undone",
  text: `select d.id, d."nextAttemptAt" from "WebhookDelivery" d join "Event" ev on ev.id = d."eventId"
    where d."endpointId" = $1 and d.id <> $2 and ev.sequence < $3::float8::bigint
      and (d.status = 'PENDING' or (d.status = 'FAILED' and d."nextAttemptAt" is not null))
    order by ev.sequence limit 1`,
} as const;

/**
 * Deliveries of ordered endpoints waiting behind an earlier one of the same endpoint: every undone one but each
 * endpoint's first (whole database, read when metrics are scraped).
 */
export const HELD_BEHIND_EARLIER = `select (count(*) - count(distinct d."endpointId"))::int as n
  from "WebhookDelivery" d join "WebhookEndpoint" e on e.id = d."endpointId"
  where e.ordering is not null and e.status <> 'INACTIVE'
    and (d.status = 'PENDING' or (d.status = 'FAILED' and d."nextAttemptAt" is not null))`;
