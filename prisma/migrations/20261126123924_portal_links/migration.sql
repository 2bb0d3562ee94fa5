-- CreateTable
CREATE TABLE "PortalLink" (
    "id" UUID NOT NULL,
    "applicationId" UUID NOT NULL,
    "storeId" UUID NOT NULL,
    "secretHash" TEXT NOT NULL,
    "createdBy" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "usedAt" TIMESTAMPTZ(3),

    CONSTRAINT "PortalLink_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "PortalLink_secretHash_key" ON "PortalLink"("secretHash");

-- CreateIndex
CREATE INDEX "PortalLink_applicationId_idx" ON "PortalLink"("applicationId");

-- CreateIndex
CREATE INDEX "PortalLink_storeId_idx" ON "PortalLink"("storeId");

-- AddForeignKey
ALTER TABLE "PortalLink" ADD CONSTRAINT "PortalLink_applicationId_fkey" FOREIGN KEY ("applicationId") REFERENCES "Application"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PortalLink" ADD CONSTRAINT "PortalLink_storeId_fkey" FOREIGN KEY ("storeId") REFERENCES "Store"("id") ON DELETE CASCADE ON UPDATE CASCADE;

