-- A backfill (POST /public/v1/webhooks/{id}/backfill) sends a store's past events to an endpoint as BACKFILL attempts.
ALTER TYPE "WebhookAttemptTrigger" ADD VALUE 'BACKFILL';
