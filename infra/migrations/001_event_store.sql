-- The event log: the source of truth. Rows are only ever inserted.
CREATE TABLE event_streams (
  stream text PRIMARY KEY,
  version integer NOT NULL CHECK (version >= 0)
);

CREATE TABLE events (
  position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- The writing transaction: readers order by (transaction_id, position) and stop below the oldest
  -- running transaction, so an event whose transaction commits late is never skipped.
  transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
  stream text NOT NULL,
  stream_version integer NOT NULL,
  type text NOT NULL,
  schema_version smallint NOT NULL,
  data jsonb NOT NULL,
  metadata jsonb NOT NULL,
  command_id text NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (stream, stream_version)
);
CREATE INDEX events_commit_order ON events (transaction_id, position);

-- The first outcome of every command id: a redelivered command appends nothing and gets this answer.
CREATE TABLE command_outcomes (
  command_id text PRIMARY KEY,
  stream text NOT NULL,
  outcome jsonb NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION events_are_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'events are append-only: % is not allowed', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER events_no_update_or_delete BEFORE UPDATE OR DELETE ON events
  FOR EACH ROW EXECUTE FUNCTION events_are_append_only();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION events_are_append_only();

-- Wakes projection runners on commit; notifications of one transaction are folded into one.
CREATE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('rivals_events', '');
  RETURN NULL;
END
$$;
CREATE TRIGGER events_notify AFTER INSERT ON events
  FOR EACH STATEMENT EXECUTE FUNCTION events_notify();

CREATE TABLE projection_checkpoints (
  projection text PRIMARY KEY,
  -- The projection's code version: when it changes, the projection is rebuilt from the start.
  version integer NOT NULL,
  transaction_id xid8 NOT NULL DEFAULT '0',
  position bigint NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now()
);
