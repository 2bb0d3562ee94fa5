-- A live stream of a stored admin key (storeEvents) ends when the key is revoked, on every API process: each one
-- that serves such a stream listens on 'admin_key_revoked' (src/platform/auth/credential.ts), which PostgreSQL
-- delivers at commit, whichever process, CLI or psql session made the change. The payload is the key's id, so only
-- that key's streams read it again; they decide by what they read, so setting or clearing revokedAt and deleting the
-- key all notify. OLD.id serves both: an update of revokedAt keeps the id, and a delete has no NEW. A TRUNCATE names
-- no key: the streams' periodic check (GRAPHQL_STREAM_CHECK_MS) ends those.
CREATE FUNCTION notify_admin_key_revoked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('admin_key_revoked', OLD.id::text);
  RETURN NULL;
END
$$;

-- UPDATE OF and WHEN keep the trigger off updates that leave revokedAt as it was.
CREATE TRIGGER admin_key_revoked AFTER UPDATE OF "revokedAt" ON "AdminKey" FOR EACH ROW
  WHEN (OLD."revokedAt" IS DISTINCT FROM NEW."revokedAt")
  EXECUTE FUNCTION notify_admin_key_revoked();
CREATE TRIGGER admin_key_removed AFTER DELETE ON "AdminKey" FOR EACH ROW EXECUTE FUNCTION notify_admin_key_revoked();
