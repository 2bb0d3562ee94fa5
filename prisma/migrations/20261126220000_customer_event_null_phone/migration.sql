-- customer.* events store the phone as null when the customer gave none (the first API version's "" is rendered
-- from it when a delivery, the feed or an event read is in that version). Stored events move to the new shape.
UPDATE "Event"
SET data = jsonb_set(data, '{phone}', 'null'::jsonb)
WHERE type IN ('customer.created', 'customer.updated') AND data->>'phone' = '';
