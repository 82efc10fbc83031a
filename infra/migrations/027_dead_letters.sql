-- Commands the workers gave up on, kept in the database rather than on the bus: Redis runs without
-- persistence, and a restart must not lose what an operator still has to retry or discard (/ops).
-- One row per failing command (`letter_key` is its command id; an entry that is not a command at all is
-- keyed by its bus entry and text), so a redelivery after a crash updates the row instead of adding one.
CREATE TABLE dead_letters (
  id bigserial PRIMARY KEY,
  letter_key text NOT NULL UNIQUE,
  -- The bus entry it came from, for the log; bus ids restart with the bus, so this is not the key.
  bus_entry_id text NOT NULL,
  -- The envelope as JSON text when it was a command, or null with `raw` holding what was on the bus as a
  -- JSON string. JSON text, not jsonb or plain text: it escapes NUL, which neither could hold.
  envelope text,
  raw text,
  error text NOT NULL,
  delivery_count integer NOT NULL,
  dead_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((envelope IS NULL) <> (raw IS NULL))
);
