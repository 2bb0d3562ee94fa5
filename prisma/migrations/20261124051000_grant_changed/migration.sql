-- Each API process caches the grants it admits partner tokens by (src/platform/auth/grant-cache.ts) and clears
-- that cache when 'grant_changed' is notified, which PostgreSQL delivers at commit. So every change to a column the
-- grant read (grant_of_token) depends on notifies: a Grant's status or its pair, an Application's status,
-- environment or clientId, a Store's code or environment, and any delete (a cascade included). Inserts need not:
-- only rows found are cached, and a new row cannot change one found. Identical notifications of one transaction
-- are sent once, so the payload is the table's name, never the row.
CREATE FUNCTION notify_grant_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('grant_changed', TG_TABLE_NAME);
  RETURN NULL;
END
$$;

-- UPDATE OF keeps the trigger off the frequent updates of other columns (a store's order counter); WHEN off
-- updates that set the same value.
CREATE TRIGGER grant_changed AFTER UPDATE OF status, "applicationId", "storeId" ON "Grant" FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD."applicationId" IS DISTINCT FROM NEW."applicationId"
    OR OLD."storeId" IS DISTINCT FROM NEW."storeId")
  EXECUTE FUNCTION notify_grant_changed();
CREATE TRIGGER grant_removed AFTER DELETE OR TRUNCATE ON "Grant" FOR EACH STATEMENT EXECUTE FUNCTION notify_grant_changed();

CREATE TRIGGER grant_changed AFTER UPDATE OF status, environment, "clientId" ON "Application" FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.environment IS DISTINCT FROM NEW.environment
    OR OLD."clientId" IS DISTINCT FROM NEW."clientId")
  EXECUTE FUNCTION notify_grant_changed();
CREATE TRIGGER grant_removed AFTER DELETE OR TRUNCATE ON "Application" FOR EACH STATEMENT EXECUTE FUNCTION notify_grant_changed();

CREATE TRIGGER grant_changed AFTER UPDATE OF code, environment ON "Store" FOR EACH ROW
  WHEN (OLD.code IS DISTINCT FROM NEW.code OR OLD.environment IS DISTINCT FROM NEW.environment)
  EXECUTE FUNCTION notify_grant_changed();
CREATE TRIGGER grant_removed AFTER DELETE OR TRUNCATE ON "Store" FOR EACH STATEMENT EXECUTE FUNCTION notify_grant_changed();
