-- NOTIFY inside a transaction makes its commit wait for a cluster-wide lock until the WAL is flushed, so
-- every append committed one at a time. Writers now notify after their commits, once per batch.
DROP TRIGGER IF EXISTS events_notify ON events;
DROP FUNCTION IF EXISTS events_notify();
