-- Every running server and worker process, with the settings all of them must share (a heartbeat row),
-- so that instances started with different settings are seen (/ops, the log, /metrics) instead of failing
-- in ways nobody can trace: a sign-in that crosses two session secrets, saves that wait for the re-send
-- because the workers listen under another Redis prefix. A row not seen for a while is a stopped process.
CREATE TABLE instances (
  instance_id text PRIMARY KEY,
  role text NOT NULL,
  host text NOT NULL,
  pid integer NOT NULL,
  -- A fingerprint of SESSION_SECRET (an HMAC of a constant under it; it does not reveal the secret), or
  -- null for a process that signs no sessions (a worker).
  session_key text,
  -- REDIS_PREFIX, or null without Redis.
  redis_prefix text,
  started_at timestamptz NOT NULL DEFAULT now(),
  seen_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX instances_seen ON instances (seen_at);
