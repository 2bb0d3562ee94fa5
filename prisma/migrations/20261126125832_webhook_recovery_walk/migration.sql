-- CreateTable
CREATE TABLE "WebhookRecovery" (
    "id" UUID NOT NULL,
    "endpointId" UUID NOT NULL,
    "window" TEXT NOT NULL,
    "since" TIMESTAMPTZ(3) NOT NULL,
    "until" TIMESTAMPTZ(3) NOT NULL,
    "status" "WebhookDeliveryStatus" NOT NULL,
    "afterCreatedAt" TIMESTAMPTZ(3),
    "afterId" UUID,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "WebhookRecovery_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "WebhookRecovery_endpointId_window_key" ON "WebhookRecovery"("endpointId", "window");

-- AddForeignKey
ALTER TABLE "WebhookRecovery" ADD CONSTRAINT "WebhookRecovery_endpointId_fkey" FOREIGN KEY ("endpointId") REFERENCES "WebhookEndpoint"("id") ON DELETE CASCADE ON UPDATE CASCADE;

