-- A version per list table, moved by every statement that writes it, in the writing transaction
-- (docs/decisions/0015-search-page-cache.md). A reader that sees the same version in a later snapshot
-- sees the same rows: a search's sorted matches, read once, serve its next pages until a write.
CREATE TABLE table_versions (
  table_name text PRIMARY KEY,
  version bigint NOT NULL
);

CREATE FUNCTION table_version_bump() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO table_versions (table_name, version) VALUES (TG_TABLE_NAME, 1)
  ON CONFLICT (table_name) DO UPDATE SET version = table_versions.version + 1;
  RETURN NULL;
END;
$$;

-- (Re)attaches the trigger and moves the version: a replay's swap calls it for the new table.
CREATE FUNCTION table_version_attach(tbl text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('DROP TRIGGER IF EXISTS table_version ON %1$I;
    CREATE TRIGGER table_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %1$I
      FOR EACH STATEMENT EXECUTE FUNCTION table_version_bump()', tbl);
  INSERT INTO table_versions (table_name, version) VALUES (tbl, 1)
  ON CONFLICT (table_name) DO UPDATE SET version = table_versions.version + 1;
END;
$$;

SELECT table_version_attach('competitor_list');
SELECT table_version_attach('audit_log');
SELECT table_version_attach('user_list');
