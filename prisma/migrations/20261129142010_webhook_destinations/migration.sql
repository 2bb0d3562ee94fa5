-- AlterTable
ALTER TABLE "WebhookEndpoint" ADD COLUMN     "destination" JSONB,
ADD COLUMN     "destinationCiphertext" TEXT,
ADD COLUMN     "ordering" TEXT,
ADD COLUMN     "type" TEXT NOT NULL DEFAULT 'http';
