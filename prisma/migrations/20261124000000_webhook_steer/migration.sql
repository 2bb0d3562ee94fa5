-- AlterEnum
ALTER TYPE "WebhookAttemptTrigger" ADD VALUE 'RECOVER';

-- AlterTable
ALTER TABLE "WebhookEndpoint" ADD COLUMN     "disabledReason" TEXT,
ADD COLUMN     "failingSince" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "WebhookDelivery_endpointId_status_createdAt_id_idx" ON "WebhookDelivery"("endpointId", "status", "createdAt", "id");
