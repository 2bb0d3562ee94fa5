-- AlterTable
ALTER TABLE "Application" ADD COLUMN     "apiVersion" TEXT NOT NULL DEFAULT '2026-11-20';

-- AlterTable
ALTER TABLE "WebhookEndpoint" ADD COLUMN     "apiVersion" TEXT NOT NULL DEFAULT '2026-11-20';


-- The API processes cache an Application's pin with its grant (src/platform/auth/grant-cache.ts); a change of pin
-- notifies 'grant_changed' like a change of status, so every process answers the next request in the new version.
DROP TRIGGER grant_changed ON "Application";
CREATE TRIGGER grant_changed AFTER UPDATE OF status, environment, "clientId", "apiVersion" ON "Application" FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.environment IS DISTINCT FROM NEW.environment
    OR OLD."clientId" IS DISTINCT FROM NEW."clientId" OR OLD."apiVersion" IS DISTINCT FROM NEW."apiVersion")
  EXECUTE FUNCTION notify_grant_changed();
