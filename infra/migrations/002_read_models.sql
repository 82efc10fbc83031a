CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE segment_board (
  id text PRIMARY KEY,
  name text NOT NULL,
  position integer NOT NULL
);

CREATE TABLE competitor_list (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  website text,
  segment_id text NOT NULL,
  segment_name text NOT NULL,
  threat text NOT NULL,
  headquarters text,
  rank integer NOT NULL,
  strengths text NOT NULL DEFAULT '',
  weaknesses text NOT NULL DEFAULT '',
  pricing text NOT NULL DEFAULT '',
  general text NOT NULL DEFAULT '',
  -- Per note column: {version, by, byName, at} of the last edit.
  note_meta jsonb NOT NULL DEFAULT '{}',
  version integer NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  -- Threat sorts by severity, not alphabetically.
  threat_level smallint GENERATED ALWAYS AS (CASE threat WHEN 'low' THEN 1 WHEN 'medium' THEN 2 ELSE 3 END) STORED,
  search_text text GENERATED ALWAYS AS (
    lower(name || ' ' || coalesce(website, '') || ' ' || segment_name || ' ' || strengths || ' ' || weaknesses || ' ' || pricing || ' ' || general)
  ) STORED
);
CREATE INDEX competitor_list_rank ON competitor_list (rank, id);
CREATE INDEX competitor_list_name ON competitor_list (lower(name), id);
CREATE INDEX competitor_list_segment ON competitor_list (segment_name, id);
CREATE INDEX competitor_list_threat ON competitor_list (threat_level, id);
CREATE INDEX competitor_list_updated ON competitor_list (updated_at, id);
CREATE INDEX competitor_list_search ON competitor_list USING gin (search_text gin_trgm_ops);

-- The competitor list's own copy of segment names (projections never read each other's tables).
CREATE TABLE competitor_list_segments (
  id text PRIMARY KEY,
  name text NOT NULL
);
