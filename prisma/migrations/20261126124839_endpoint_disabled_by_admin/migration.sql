-- AlterTable
ALTER TABLE "WebhookEndpoint" ADD COLUMN     "disabledByAdmin" BOOLEAN NOT NULL DEFAULT false;


-- Endpoints an administrator had already set INACTIVE said so only in their reason.
UPDATE "WebhookEndpoint" SET "disabledByAdmin" = true WHERE status = 'INACTIVE' AND "disabledReason" = 'Set INACTIVE by an administrator.';
