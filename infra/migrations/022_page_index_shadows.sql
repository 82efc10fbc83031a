-- A rebuild's shadow tables get their page-index buckets before the swap, not under its lock
-- (docs/decisions/0011-page-index.md). The shadow of a table with page indexes registers each sort
-- again under the shadow's names (`<bucket>__shadow` over `<table>__shadow`), so the ordinary triggers
-- keep those buckets exact while the rebuild catches up; the swap only renames them into place.

-- The triggers alone, split out of page_index_attach (which also rebuilds every sort of the table).
CREATE FUNCTION page_index_triggers(tbl text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('DROP TRIGGER IF EXISTS page_index_insert ON %1$I;
    CREATE TRIGGER page_index_insert AFTER INSERT ON %1$I REFERENCING NEW TABLE AS pi_new
      FOR EACH STATEMENT EXECUTE FUNCTION page_index_on_insert()', tbl);
  EXECUTE format('DROP TRIGGER IF EXISTS page_index_delete ON %1$I;
    CREATE TRIGGER page_index_delete AFTER DELETE ON %1$I REFERENCING OLD TABLE AS pi_old
      FOR EACH STATEMENT EXECUTE FUNCTION page_index_on_delete()', tbl);
  EXECUTE format('DROP TRIGGER IF EXISTS page_index_update ON %1$I;
    CREATE TRIGGER page_index_update AFTER UPDATE ON %1$I REFERENCING OLD TABLE AS pi_old NEW TABLE AS pi_new
      FOR EACH STATEMENT EXECUTE FUNCTION page_index_on_update()', tbl);
  EXECUTE format('DROP TRIGGER IF EXISTS page_index_truncate ON %1$I;
    CREATE TRIGGER page_index_truncate AFTER TRUNCATE ON %1$I
      FOR EACH STATEMENT EXECUTE FUNCTION page_index_on_truncate()', tbl);
END;
$$;

CREATE OR REPLACE FUNCTION page_index_attach(tbl text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  name text;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM page_index_sorts WHERE table_name = tbl) THEN
    RETURN;
  END IF;
  PERFORM page_index_triggers(tbl);
  FOR name IN SELECT bucket_table FROM page_index_sorts WHERE table_name = tbl LOOP
    PERFORM page_index_rebuild(name);
  END LOOP;
END;
$$;

-- Forgets the shadow's sorts and drops their buckets (a new rebuild, a dry run's end, or a resumed pass
-- that must not pay for triggers while it loads).
CREATE FUNCTION page_index_shadow_drop(tbl text, suffix text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  name text;
BEGIN
  FOR name IN DELETE FROM page_index_sorts WHERE table_name = tbl || suffix RETURNING bucket_table LOOP
    EXECUTE format('DROP TABLE IF EXISTS %I', name);
  END LOOP;
  IF to_regclass(quote_ident(tbl || suffix)) IS NOT NULL THEN
    EXECUTE format('DROP TRIGGER IF EXISTS page_index_insert ON %1$I;
      DROP TRIGGER IF EXISTS page_index_delete ON %1$I;
      DROP TRIGGER IF EXISTS page_index_update ON %1$I;
      DROP TRIGGER IF EXISTS page_index_truncate ON %1$I', tbl || suffix);
  END IF;
END;
$$;

-- Registers every sort of `tbl` for its shadow, builds the shadow's buckets and attaches the triggers
-- that keep them exact from now on.
CREATE FUNCTION page_index_shadow(tbl text, suffix text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  s page_index_sorts;
BEGIN
  PERFORM page_index_shadow_drop(tbl, suffix);
  FOR s IN SELECT * FROM page_index_sorts WHERE table_name = tbl LOOP
    PERFORM page_index_create(s.bucket_table || suffix, tbl || suffix, s.key_exprs, s.key_types, s.key_floors,
      s.id_column, s.id_type, s.id_floor, s.bucket_size);
  END LOOP;
  PERFORM page_index_attach(tbl || suffix);
END;
$$;

-- In the swap's transaction, after `<tbl><suffix>` was renamed to `tbl`: the shadow's buckets replace
-- the live ones (a sort without shadow buckets is rebuilt from the new table instead), and the table's
-- triggers are (re)attached.
CREATE FUNCTION page_index_swap(tbl text, suffix text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  s page_index_sorts;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM page_index_sorts WHERE table_name = tbl) THEN
    RETURN;
  END IF;
  DELETE FROM page_index_sorts WHERE table_name = tbl || suffix;
  PERFORM page_index_triggers(tbl);
  FOR s IN SELECT * FROM page_index_sorts WHERE table_name = tbl LOOP
    IF to_regclass(quote_ident(s.bucket_table || suffix)) IS NULL THEN
      PERFORM page_index_rebuild(s.bucket_table);
    ELSE
      EXECUTE format('DROP TABLE %I', s.bucket_table);
      EXECUTE format('ALTER TABLE %I RENAME TO %I', s.bucket_table || suffix, s.bucket_table);
      EXECUTE format('ALTER INDEX %I RENAME TO %I', s.bucket_table || suffix || '_pkey', s.bucket_table || '_pkey');
    END IF;
  END LOOP;
END;
$$;
