-- CreateEnum
CREATE TYPE "ExportStatus" AS ENUM ('queued', 'running', 'completed', 'failed');

-- CreateTable
CREATE TABLE "Export" (
    "id" UUID NOT NULL,
    "applicationId" UUID NOT NULL,
    "storeId" UUID NOT NULL,
    "resource" TEXT NOT NULL,
    "updatedSince" TIMESTAMPTZ(3),
    "apiVersion" TEXT NOT NULL,
    "status" "ExportStatus" NOT NULL DEFAULT 'queued',
    "objectCount" INTEGER,
    "bytes" BIGINT,
    "sequence" BIGINT,
    "error" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "startedAt" TIMESTAMPTZ(3),
    "completedAt" TIMESTAMPTZ(3),
    "removeAt" TIMESTAMPTZ(3),

    CONSTRAINT "Export_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ExportChunk" (
    "exportId" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "data" BYTEA NOT NULL,

    CONSTRAINT "ExportChunk_pkey" PRIMARY KEY ("exportId","position")
);

-- CreateIndex
CREATE INDEX "Export_applicationId_storeId_createdAt_id_idx" ON "Export"("applicationId", "storeId", "createdAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "Export_removeAt_idx" ON "Export"("removeAt");

-- AddForeignKey
ALTER TABLE "Export" ADD CONSTRAINT "Export_applicationId_fkey" FOREIGN KEY ("applicationId") REFERENCES "Application"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Export" ADD CONSTRAINT "Export_storeId_fkey" FOREIGN KEY ("storeId") REFERENCES "Store"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ExportChunk" ADD CONSTRAINT "ExportChunk_exportId_fkey" FOREIGN KEY ("exportId") REFERENCES "Export"("id") ON DELETE CASCADE ON UPDATE CASCADE;
