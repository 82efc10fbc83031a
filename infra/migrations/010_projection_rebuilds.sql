-- A rebuild in progress: where its shadow tables have got to (committed with each shadow batch, so a
-- killed rebuild resumes from here), what it was asked for, and who runs it.
CREATE TABLE projection_rebuilds (
  projection text PRIMARY KEY,
  version integer NOT NULL,
  transaction_id xid8 NOT NULL DEFAULT '0',
  position bigint NOT NULL DEFAULT 0,
  events bigint NOT NULL DEFAULT 0,
  -- The limits it was started with ({toPosition, toTime}); a run with other limits starts over.
  limits jsonb NOT NULL DEFAULT '{}',
  holder text NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Events by time: the /ops rate sparkline, lag in seconds and `events:export --from/--to <time>`.
CREATE INDEX events_recorded_at ON events (recorded_at);
