-- Page indexes: any page of any sort in constant time (docs/decisions/0011-page-index.md).
--
-- For each sort, a small "bucket" table splits the sort order into runs of about `bucket_size` rows: a
-- bucket is its first key (the boundary) and how many rows lie between it and the next boundary. Page n
-- then costs a running sum over the buckets (about rows / bucket_size of them), a skip of at most two
-- buckets' worth of keys in the sort's own index, and a keyset read of the page. Statement-level
-- triggers keep the counts exact in the writing transaction, so readers always see buckets and rows of
-- the same snapshot. The first bucket's boundary is a floor below every possible key; it is never removed.

CREATE TABLE page_index_sorts (
  bucket_table text PRIMARY KEY,
  table_name text NOT NULL,
  -- Key expressions over the table's columns, never NULL; then the unique tie-breaker column.
  key_exprs text[] NOT NULL,
  key_types text[] NOT NULL,
  key_floors text[] NOT NULL,
  id_column text NOT NULL,
  id_type text NOT NULL,
  id_floor text NOT NULL,
  bucket_size integer NOT NULL
);

-- 'pk_1, pk_2, pk_id' (with a prefix: 'r.pk_1, …').
CREATE FUNCTION page_index_columns(s page_index_sorts, prefix text DEFAULT '') RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT string_agg(prefix || 'pk_' || i, ', ' ORDER BY i) || ', ' || prefix || 'pk_id'
  FROM generate_series(1, cardinality(s.key_exprs)) AS i
$$;

-- 'lower(name), id': the sort key over the table's row.
CREATE FUNCTION page_index_key(s page_index_sorts) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT array_to_string(s.key_exprs, ', ') || ', ' || quote_ident(s.id_column)
$$;

-- 'lower(name) AS pk_1, id AS pk_id'
CREATE FUNCTION page_index_key_as(s page_index_sorts) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT string_agg(s.key_exprs[i] || ' AS pk_' || i, ', ' ORDER BY i) || ', ' || quote_ident(s.id_column) || ' AS pk_id'
  FROM generate_series(1, cardinality(s.key_exprs)) AS i
$$;

-- Adds `sign` × (rows of `source_sql`, which yields pk_1…, pk_id) to the buckets they fall in.
CREATE FUNCTION page_index_delta_sql(s page_index_sorts, source_sql text, sign integer) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT format(
    'UPDATE %1$I b SET pk_n = b.pk_n + %2$s * d.c
     FROM (SELECT %3$s, count(*) AS c FROM (%4$s) r
           CROSS JOIN LATERAL (SELECT %5$s FROM %1$I WHERE (%5$s) <= (%6$s) ORDER BY %7$s LIMIT 1) x
           GROUP BY %8$s) d
     WHERE (%9$s) = (%10$s)',
    s.bucket_table, sign, page_index_columns(s, 'x.'), source_sql, page_index_columns(s),
    page_index_columns(s, 'r.'),
    (SELECT string_agg(c || ' DESC', ', ') FROM unnest(string_to_array(page_index_columns(s), ', ')) AS c),
    page_index_columns(s, 'x.'), page_index_columns(s, 'b.'), page_index_columns(s, 'd.'))
$$;

-- Rebuilds one sort's buckets from the table: one ordered pass.
CREATE FUNCTION page_index_rebuild(name text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  s page_index_sorts;
BEGIN
  SELECT * INTO STRICT s FROM page_index_sorts WHERE bucket_table = name;
  EXECUTE format('DELETE FROM %I', s.bucket_table);
  EXECUTE format('INSERT INTO %I (%s, pk_n) VALUES (%s, %s, 0)', s.bucket_table, page_index_columns(s),
    array_to_string(s.key_floors, ', '), s.id_floor);
  EXECUTE format(
    'INSERT INTO %1$I (%2$s, pk_n)
     SELECT %2$s, least(%3$s, t - rn) FROM (
       SELECT %4$s, row_number() OVER (ORDER BY %5$s) - 1 AS rn, count(*) OVER () AS t FROM %6$I
     ) o WHERE rn %% %3$s = 0
     ON CONFLICT (%2$s) DO UPDATE SET pk_n = EXCLUDED.pk_n',
    s.bucket_table, page_index_columns(s), s.bucket_size, page_index_key_as(s), page_index_key(s), s.table_name);
END;
$$;

-- After counts changed: empty buckets go (their range joins the previous one), full ones split in two;
-- far too many or far too large buckets (a bulk load, long churn) rebuild the sort in one pass.
CREATE FUNCTION page_index_balance(s page_index_sorts) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  buckets bigint;
  total bigint;
  largest bigint;
  split integer;
BEGIN
  EXECUTE format('DELETE FROM %I WHERE pk_n = 0 AND (%s) <> (%s, %s)', s.bucket_table, page_index_columns(s),
    array_to_string(s.key_floors, ', '), s.id_floor);
  EXECUTE format('SELECT count(*), coalesce(sum(pk_n), 0), coalesce(max(pk_n), 0) FROM %I', s.bucket_table)
    INTO buckets, total, largest;
  IF largest > 8 * s.bucket_size OR buckets > 3 * (total / s.bucket_size) + 16 THEN
    PERFORM page_index_rebuild(s.bucket_table);
    RETURN;
  END IF;
  LOOP
    EXIT WHEN largest <= 2 * s.bucket_size;
    -- The fullest bucket gives its second half to a new boundary: the key in its middle.
    EXECUTE format(
      'WITH big AS (SELECT %1$s, pk_n FROM %2$I ORDER BY pk_n DESC LIMIT 1),
            mid AS (SELECT %3$s FROM %4$I WHERE (%5$s) >= (%6$s) ORDER BY %5$s OFFSET (SELECT pk_n / 2 FROM big) LIMIT 1),
            shrunk AS (UPDATE %2$I b SET pk_n = b.pk_n / 2 FROM big WHERE (%7$s) = (%8$s))
       INSERT INTO %2$I (%1$s, pk_n) SELECT mid.*, (SELECT pk_n - pk_n / 2 FROM big) FROM mid',
      page_index_columns(s), s.bucket_table, page_index_key_as(s), s.table_name, page_index_key(s),
      (SELECT string_agg('(SELECT ' || c || ' FROM big)', ', ') FROM unnest(string_to_array(page_index_columns(s), ', ')) AS c),
      page_index_columns(s, 'b.'), page_index_columns(s, 'big.'));
    GET DIAGNOSTICS split = ROW_COUNT;
    EXIT WHEN split = 0;
    EXECUTE format('SELECT max(pk_n) FROM %I', s.bucket_table) INTO largest;
  END LOOP;
END;
$$;

-- Statement-level triggers: transition tables are visible only to this function's own statements, so
-- each builds its SQL and runs it here.
CREATE FUNCTION page_index_on_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  s page_index_sorts;
BEGIN
  FOR s IN SELECT * FROM page_index_sorts WHERE table_name = TG_TABLE_NAME LOOP
    EXECUTE page_index_delta_sql(s, format('SELECT %s FROM pi_new', page_index_key_as(s)), 1);
    PERFORM page_index_balance(s);
  END LOOP;
  RETURN NULL;
END;
$$;

CREATE FUNCTION page_index_on_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  s page_index_sorts;
BEGIN
  FOR s IN SELECT * FROM page_index_sorts WHERE table_name = TG_TABLE_NAME LOOP
    EXECUTE page_index_delta_sql(s, format('SELECT %s FROM pi_old', page_index_key_as(s)), -1);
    PERFORM page_index_balance(s);
  END LOOP;
  RETURN NULL;
END;
$$;

-- Only keys that changed move: unchanged (key, id) pairs cancel out of old EXCEPT ALL new.
CREATE FUNCTION page_index_on_update() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  s page_index_sorts;
  old_keys text;
  new_keys text;
BEGIN
  FOR s IN SELECT * FROM page_index_sorts WHERE table_name = TG_TABLE_NAME LOOP
    old_keys := format('SELECT %s FROM pi_old', page_index_key_as(s));
    new_keys := format('SELECT %s FROM pi_new', page_index_key_as(s));
    EXECUTE page_index_delta_sql(s, old_keys || ' EXCEPT ALL ' || new_keys, -1);
    EXECUTE page_index_delta_sql(s, new_keys || ' EXCEPT ALL ' || old_keys, 1);
    PERFORM page_index_balance(s);
  END LOOP;
  RETURN NULL;
END;
$$;

CREATE FUNCTION page_index_on_truncate() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  s page_index_sorts;
BEGIN
  FOR s IN SELECT * FROM page_index_sorts WHERE table_name = TG_TABLE_NAME LOOP
    PERFORM page_index_rebuild(s.bucket_table);
  END LOOP;
  RETURN NULL;
END;
$$;

-- (Re)attaches the triggers to a table and rebuilds its sorts; a replay's swap calls it for the new table.
CREATE FUNCTION page_index_attach(tbl text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  name text;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM page_index_sorts WHERE table_name = tbl) THEN
    RETURN;
  END IF;
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
  FOR name IN SELECT bucket_table FROM page_index_sorts WHERE table_name = tbl LOOP
    PERFORM page_index_rebuild(name);
  END LOOP;
END;
$$;

-- Registers a sort and creates its bucket table (attach afterwards).
CREATE FUNCTION page_index_create(
  bucket_table text, table_name text, key_exprs text[], key_types text[], key_floors text[],
  id_column text, id_type text, id_floor text, bucket_size integer DEFAULT 1000
) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  s page_index_sorts;
BEGIN
  INSERT INTO page_index_sorts VALUES (bucket_table, table_name, key_exprs, key_types, key_floors, id_column,
    id_type, id_floor, bucket_size) RETURNING * INTO s;
  EXECUTE format('CREATE TABLE %I (%s, pk_id %s NOT NULL, pk_n bigint NOT NULL, PRIMARY KEY (%s))',
    bucket_table,
    (SELECT string_agg(format('pk_%s %s NOT NULL', i, key_types[i]), ', ' ORDER BY i)
       FROM generate_series(1, cardinality(key_types)) AS i),
    id_type, page_index_columns(s));
END;
$$;

-- Competitors (rank needs none: ranks are dense, so a rank is its own position).
SELECT page_index_create('competitor_list_pages_name', 'competitor_list', ARRAY['lower(name)'], ARRAY['text'],
  ARRAY[$$''$$], 'id', 'uuid', $$'00000000-0000-0000-0000-000000000000'$$);
SELECT page_index_create('competitor_list_pages_segment', 'competitor_list', ARRAY['segment_name'], ARRAY['text'],
  ARRAY[$$''$$], 'id', 'uuid', $$'00000000-0000-0000-0000-000000000000'$$);
SELECT page_index_create('competitor_list_pages_threat', 'competitor_list', ARRAY['threat_level'], ARRAY['smallint'],
  ARRAY['(-32768)::smallint'], 'id', 'uuid', $$'00000000-0000-0000-0000-000000000000'$$);
SELECT page_index_create('competitor_list_pages_updated', 'competitor_list', ARRAY['updated_at'], ARRAY['timestamptz'],
  ARRAY[$$'-infinity'::timestamptz$$], 'id', 'uuid', $$'00000000-0000-0000-0000-000000000000'$$);
SELECT page_index_attach('competitor_list');

-- Audit log. The competitor column sorts names first and rows without a competitor last in both
-- directions, so each direction has its own key (read backwards for descending).
CREATE INDEX audit_log_competitor_sort ON audit_log
  ((competitor_name IS NULL), (coalesce(lower(competitor_name), '')), position);
CREATE INDEX audit_log_competitor_sort_desc ON audit_log
  ((competitor_name IS NOT NULL), (coalesce(lower(competitor_name), '')), position);
DROP INDEX audit_log_competitor_name;
SELECT page_index_create('audit_log_pages_time', 'audit_log', ARRAY['at'], ARRAY['timestamptz'],
  ARRAY[$$'-infinity'::timestamptz$$], 'position', 'bigint', '(-9223372036854775808)::bigint');
SELECT page_index_create('audit_log_pages_actor', 'audit_log', ARRAY['lower(actor_name)'], ARRAY['text'],
  ARRAY[$$''$$], 'position', 'bigint', '(-9223372036854775808)::bigint');
SELECT page_index_create('audit_log_pages_type', 'audit_log', ARRAY['type'], ARRAY['text'],
  ARRAY[$$''$$], 'position', 'bigint', '(-9223372036854775808)::bigint');
SELECT page_index_create('audit_log_pages_competitor', 'audit_log',
  ARRAY['(competitor_name IS NULL)', $$coalesce(lower(competitor_name), '')$$], ARRAY['boolean', 'text'],
  ARRAY['false', $$''$$], 'position', 'bigint', '(-9223372036854775808)::bigint');
SELECT page_index_create('audit_log_pages_competitor_desc', 'audit_log',
  ARRAY['(competitor_name IS NOT NULL)', $$coalesce(lower(competitor_name), '')$$], ARRAY['boolean', 'text'],
  ARRAY['false', $$''$$], 'position', 'bigint', '(-9223372036854775808)::bigint');
SELECT page_index_attach('audit_log');

-- Users.
CREATE INDEX user_list_name_sort ON user_list (lower(display_name), id);
CREATE INDEX user_list_email_sort ON user_list (lower(email), id);
CREATE INDEX user_list_role_sort ON user_list (role, id);
CREATE INDEX user_list_created_sort ON user_list (created_at, id);
SELECT page_index_create('user_list_pages_name', 'user_list', ARRAY['lower(display_name)'], ARRAY['text'],
  ARRAY[$$''$$], 'id', 'uuid', $$'00000000-0000-0000-0000-000000000000'$$);
SELECT page_index_create('user_list_pages_email', 'user_list', ARRAY['lower(email)'], ARRAY['text'],
  ARRAY[$$''$$], 'id', 'uuid', $$'00000000-0000-0000-0000-000000000000'$$);
SELECT page_index_create('user_list_pages_role', 'user_list', ARRAY['role'], ARRAY['text'],
  ARRAY[$$''$$], 'id', 'uuid', $$'00000000-0000-0000-0000-000000000000'$$);
SELECT page_index_create('user_list_pages_created', 'user_list', ARRAY['created_at'], ARRAY['timestamptz'],
  ARRAY[$$'-infinity'::timestamptz$$], 'id', 'uuid', $$'00000000-0000-0000-0000-000000000000'$$);
SELECT page_index_attach('user_list');
