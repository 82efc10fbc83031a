-- Commands accepted through the web, with who sent them. A web instance writes the envelope here before it
-- answers "accepted", so the promise survives a Redis restart without persistence: Redis only carries the
-- wake-up, and workers re-send whatever stays unsettled too long. The row stays after handling (like the
-- command's outcome), so a key is bound to its sender for good.
CREATE TABLE command_inbox (
  command_id text PRIMARY KEY,
  actor_id text NOT NULL,
  envelope jsonb NOT NULL,
  accepted_at timestamptz NOT NULL DEFAULT now(),
  -- When a worker handled it (or gave up on it); null while in flight.
  settled_at timestamptz,
  -- When a worker last put it back on the bus (null: never), and how often.
  resent_at timestamptz,
  resends integer NOT NULL DEFAULT 0
);
-- Only what is in flight is ever scanned.
CREATE INDEX command_inbox_in_flight ON command_inbox (accepted_at) WHERE settled_at IS NULL;
