-- Page-index upkeep compiled per table (docs/decisions/0011-page-index.md, "Upkeep cost").
--
-- The generic triggers of 015 built every statement with format() and ran it with EXECUTE: planned
-- again on every call, two deltas and a balance (two more statements) per sort, even for sorts whose
-- keys did not change and for an upsert that inserted nothing. A projection batch of 26 note edits paid
-- ~12 ms of its ~15 ms there. Now each table with sorts gets three trigger functions of its own,
-- generated from the registry, whose statements are static SQL: PL/pgSQL plans them once per session.
-- Per sort and statement there is one delta statement (old keys out and new keys in, together); the
-- balance runs only when a bucket emptied or overfilled, or rows were deleted (the only way the
-- buckets-per-row ratio can grow without a split). Counts stay exact exactly as before.

-- The delta of one sort as a static statement: `source` yields (pk_1…, pk_id, sign); each row's bucket
-- gets `sign` added; the lowest and highest resulting counts land in `lo` and `hi` (NULL: none moved).
-- The sort is balanced when a bucket emptied or overfilled, and always after a delete (`deleting`).
CREATE FUNCTION page_index_delta_static(s page_index_sorts, source text, deleting boolean) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT format(
    'WITH r AS (%4$s),
          d AS (SELECT %3$s, sum(r.sign) AS c FROM r
                CROSS JOIN LATERAL (SELECT %2$s FROM %1$I WHERE (%2$s) <= (%5$s) ORDER BY %6$s LIMIT 1) x
                GROUP BY %3$s),
          u AS (UPDATE %1$I b SET pk_n = b.pk_n + d.c FROM d WHERE (%7$s) = (%8$s) AND d.c <> 0 RETURNING b.pk_n)
     SELECT min(pk_n), max(pk_n) INTO pi_lo, pi_hi FROM u;
     IF pi_lo = 0 OR pi_hi > %9$s%10$s THEN
       PERFORM page_index_balance(p) FROM page_index_sorts p WHERE p.bucket_table = %11$L;
     END IF;',
    s.bucket_table, page_index_columns(s), page_index_columns(s, 'x.'), source, page_index_columns(s, 'r.'),
    (SELECT string_agg(c || ' DESC', ', ') FROM unnest(string_to_array(page_index_columns(s), ', ')) AS c),
    page_index_columns(s, 'b.'), page_index_columns(s, 'd.'), 2 * s.bucket_size,
    CASE WHEN deleting THEN ' OR TRUE' ELSE '' END,
    s.bucket_table)
$$;

-- The names of a table's compiled trigger functions.
CREATE FUNCTION page_index_function(tbl text, action text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT tbl || '_pi_' || action $$;

CREATE FUNCTION page_index_drop_functions(tbl text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('DROP FUNCTION IF EXISTS %I(); DROP FUNCTION IF EXISTS %I(); DROP FUNCTION IF EXISTS %I()',
    page_index_function(tbl, 'insert'), page_index_function(tbl, 'delete'), page_index_function(tbl, 'update'));
END;
$$;

-- (Re)generates the table's three trigger functions from the sorts registered for it.
CREATE FUNCTION page_index_compile(tbl text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  s page_index_sorts;
  ins text := '';
  del text := '';
  upd text := '';
  keys_old text;
  keys_new text;
BEGIN
  -- Longer names would be cut to 63 bytes and the three functions would collide.
  IF octet_length(page_index_function(tbl, 'insert')) > 63 THEN
    RAISE EXCEPTION 'page index: table name % is too long for its trigger functions', tbl;
  END IF;
  FOR s IN SELECT * FROM page_index_sorts WHERE table_name = tbl ORDER BY bucket_table LOOP
    keys_old := format('SELECT %s FROM pi_old', page_index_key_as(s));
    keys_new := format('SELECT %s FROM pi_new', page_index_key_as(s));
    ins := ins || page_index_delta_static(s, format('SELECT *, 1 AS sign FROM (%s) k', keys_new), false);
    del := del || page_index_delta_static(s, format('SELECT *, -1 AS sign FROM (%s) k', keys_old), true);
    upd := upd || page_index_delta_static(s, format(
      'SELECT *, -1 AS sign FROM (%1$s EXCEPT ALL %2$s) k UNION ALL SELECT *, 1 AS sign FROM (%2$s EXCEPT ALL %1$s) k',
      keys_old, keys_new), false);
  END LOOP;
  EXECUTE format(
    'CREATE OR REPLACE FUNCTION %I() RETURNS trigger LANGUAGE plpgsql AS %L',
    page_index_function(tbl, 'insert'),
    'DECLARE pi_lo bigint; pi_hi bigint; BEGIN IF NOT EXISTS (SELECT FROM pi_new) THEN RETURN NULL; END IF; '
      || ins || ' RETURN NULL; END;');
  EXECUTE format(
    'CREATE OR REPLACE FUNCTION %I() RETURNS trigger LANGUAGE plpgsql AS %L',
    page_index_function(tbl, 'delete'),
    'DECLARE pi_lo bigint; pi_hi bigint; BEGIN IF NOT EXISTS (SELECT FROM pi_old) THEN RETURN NULL; END IF; '
      || del || ' RETURN NULL; END;');
  EXECUTE format(
    'CREATE OR REPLACE FUNCTION %I() RETURNS trigger LANGUAGE plpgsql AS %L',
    page_index_function(tbl, 'update'),
    'DECLARE pi_lo bigint; pi_hi bigint; BEGIN IF NOT EXISTS (SELECT FROM pi_new) THEN RETURN NULL; END IF; '
      || upd || ' RETURN NULL; END;');
END;
$$;

-- The triggers now call the table's compiled functions (TRUNCATE keeps the generic rebuild).
CREATE OR REPLACE FUNCTION page_index_triggers(tbl text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM page_index_compile(tbl);
  EXECUTE format('DROP TRIGGER IF EXISTS page_index_insert ON %1$I;
    CREATE TRIGGER page_index_insert AFTER INSERT ON %1$I REFERENCING NEW TABLE AS pi_new
      FOR EACH STATEMENT EXECUTE FUNCTION %2$I()', tbl, page_index_function(tbl, 'insert'));
  EXECUTE format('DROP TRIGGER IF EXISTS page_index_delete ON %1$I;
    CREATE TRIGGER page_index_delete AFTER DELETE ON %1$I REFERENCING OLD TABLE AS pi_old
      FOR EACH STATEMENT EXECUTE FUNCTION %2$I()', tbl, page_index_function(tbl, 'delete'));
  EXECUTE format('DROP TRIGGER IF EXISTS page_index_update ON %1$I;
    CREATE TRIGGER page_index_update AFTER UPDATE ON %1$I REFERENCING OLD TABLE AS pi_old NEW TABLE AS pi_new
      FOR EACH STATEMENT EXECUTE FUNCTION %2$I()', tbl, page_index_function(tbl, 'update'));
  EXECUTE format('DROP TRIGGER IF EXISTS page_index_truncate ON %1$I;
    CREATE TRIGGER page_index_truncate AFTER TRUNCATE ON %1$I
      FOR EACH STATEMENT EXECUTE FUNCTION page_index_on_truncate()', tbl);
END;
$$;

-- As in 022, and the shadow's compiled functions go with its triggers.
CREATE OR REPLACE FUNCTION page_index_shadow_drop(tbl text, suffix text) RETURNS void
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
  PERFORM page_index_drop_functions(tbl || suffix);
END;
$$;

-- As in 022 (the new table's triggers are compiled for the live names), and the shadow's compiled
-- functions, which the renamed table's old triggers called, are dropped.
CREATE OR REPLACE FUNCTION page_index_swap(tbl text, suffix text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  s page_index_sorts;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM page_index_sorts WHERE table_name = tbl) THEN
    RETURN;
  END IF;
  DELETE FROM page_index_sorts WHERE table_name = tbl || suffix;
  PERFORM page_index_triggers(tbl);
  PERFORM page_index_drop_functions(tbl || suffix);
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

-- Every table that has sorts today (a shadow left by an interrupted rebuild included) moves over.
SELECT page_index_triggers(t.table_name)
FROM (SELECT DISTINCT table_name FROM page_index_sorts) t
WHERE to_regclass(quote_ident(t.table_name)) IS NOT NULL;
