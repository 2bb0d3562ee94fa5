-- Fault drills on SANDBOX endpoints: the drill an endpoint runs (null: none) and what it did to each attempt.
-- CreateEnum
CREATE TYPE "WebhookAttemptDrill" AS ENUM ('duplicate', 'delayed', 'reordered');

-- AlterTable
ALTER TABLE "WebhookEndpoint" ADD COLUMN     "drill" JSONB;

-- AlterTable
ALTER TABLE "WebhookAttempt" ADD COLUMN     "drill" "WebhookAttemptDrill";

