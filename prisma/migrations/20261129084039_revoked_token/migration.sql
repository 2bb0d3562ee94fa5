-- CreateTable
CREATE TABLE "RevokedToken" (
    "jti" TEXT NOT NULL,
    "clientId" TEXT NOT NULL,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "revokedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "RevokedToken_pkey" PRIMARY KEY ("jti")
);

-- CreateIndex
CREATE INDEX "RevokedToken_expiresAt_idx" ON "RevokedToken"("expiresAt");


-- Every API process keeps the unexpired revoked tokens in memory (src/platform/auth/revocations.ts) and adds each new
-- one when 'token_revoked' is notified, which PostgreSQL delivers at commit, whichever process, CLI or psql session
-- inserted it. The payload is the token's expiry in ms since the epoch and its jti, so no process reads the row.
-- A process that lost its LISTEN reads the whole table again on reconnecting; deleting rows needs no notice (only
-- expired ones are deleted).
CREATE FUNCTION notify_token_revoked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('token_revoked', (extract(epoch FROM NEW."expiresAt") * 1000)::bigint || ' ' || NEW.jti);
  RETURN NULL;
END
$$;

CREATE TRIGGER token_revoked AFTER INSERT ON "RevokedToken" FOR EACH ROW EXECUTE FUNCTION notify_token_revoked();
