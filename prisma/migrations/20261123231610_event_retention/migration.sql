-- CreateIndex
CREATE INDEX "Event_createdAt_idx" ON "Event"("createdAt");

