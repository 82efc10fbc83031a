-- Commands accepted but not yet handled. A web instance writes the envelope here before it answers
-- "accepted", so the promise survives a Redis restart without persistence: Redis only carries the
-- wake-up, and workers re-send whatever stays here too long. Handling a command records its outcome
-- and deletes its row in the same statement, so the table holds only what is still in flight.
CREATE TABLE command_inbox (
  command_id text PRIMARY KEY,
  actor_id text NOT NULL,
  envelope jsonb NOT NULL,
  accepted_at timestamptz NOT NULL DEFAULT now(),
  -- When a worker last put it back on the bus (null: never), and how often.
  resent_at timestamptz,
  resends integer NOT NULL DEFAULT 0
);
