-- Every version of every note, with who changed it, when, and what it replaced.
CREATE TABLE note_history (
  competitor_id uuid NOT NULL,
  column_name text NOT NULL,
  note_version integer NOT NULL,
  value text NOT NULL,
  previous_value text NOT NULL,
  actor_id text NOT NULL,
  actor_name text NOT NULL,
  changed_at timestamptz NOT NULL,
  position bigint NOT NULL,
  PRIMARY KEY (competitor_id, column_name, note_version)
);
CREATE INDEX note_history_time ON note_history (competitor_id, changed_at);

-- One row per event, for /audit. Competitor names are kept as they were, so deleted competitors stay reviewable.
CREATE TABLE audit_log (
  position bigint PRIMARY KEY,
  at timestamptz NOT NULL,
  actor_id text NOT NULL,
  actor_name text NOT NULL,
  type text NOT NULL,
  stream text NOT NULL,
  competitor_id uuid,
  competitor_name text,
  summary text NOT NULL,
  search_text text GENERATED ALWAYS AS (lower(actor_name || ' ' || type || ' ' || coalesce(competitor_name, '') || ' ' || summary)) STORED
);
CREATE INDEX audit_log_at ON audit_log (at, position);
CREATE INDEX audit_log_actor ON audit_log (lower(actor_name), position);
CREATE INDEX audit_log_type ON audit_log (type, position);
CREATE INDEX audit_log_competitor ON audit_log (competitor_id, position);
CREATE INDEX audit_log_competitor_name ON audit_log (lower(competitor_name), position);
CREATE INDEX audit_log_search ON audit_log USING gin (search_text gin_trgm_ops);

-- The audit projection's own record of the competitors and users it has seen (projections never read
-- each other's tables): names for rows, and fields to say what an update changed.
CREATE TABLE audit_log_subjects (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  fields jsonb NOT NULL DEFAULT '{}'
);
