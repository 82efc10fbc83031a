-- Readers of the log wait only for transactions that may still write events (decision 0028, which
-- narrows decision 0002). Before, they stopped below the oldest transaction running anywhere in the
-- Postgres cluster (pg_snapshot_xmin): a psql session left open, another application's report, or this
-- project's own CREATE INDEX during a rebuild held every projection, and every save's read-your-writes,
-- back for as long as it ran.
--
-- The rule that makes the narrower horizon safe: a transaction that writes the log (events, streams,
-- command outcomes) holds the log's append lock, a shared advisory lock, taken before the transaction
-- has a transaction id, and held to its end. Then a transaction that is running with an id and without
-- the lock can never write an event (the lock can no longer be taken, and no write of the log goes
-- through without it), so a reader may pass its id.

CREATE FUNCTION log_append_lock() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('rivals.log_append_lock', true) = 'held' THEN
    RETURN;
  END IF;
  IF pg_current_xact_id_if_assigned() IS NOT NULL THEN
    RAISE EXCEPTION 'this transaction wrote before it wrote to the event log: call log_append_lock() first'
      USING ERRCODE = 'object_not_in_prerequisite_state';
  END IF;
  PERFORM pg_advisory_xact_lock_shared(1380537921, 1);
  PERFORM set_config('rivals.log_append_lock', 'held', true);
END
$$;

-- Every statement that writes the log takes the lock before its first row: a statement-level BEFORE
-- trigger fires before its table's first row is written, so whichever of these tables a statement
-- writes first, the lock is taken while the transaction has no id yet (if nothing else was written
-- before in the transaction; otherwise the write is refused, never let through unsafely).
CREATE FUNCTION log_write_takes_append_lock() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM log_append_lock();
  RETURN NULL;
END
$$;
CREATE TRIGGER events_take_append_lock BEFORE INSERT ON events
  FOR EACH STATEMENT EXECUTE FUNCTION log_write_takes_append_lock();
CREATE TRIGGER event_streams_take_append_lock BEFORE INSERT OR UPDATE ON event_streams
  FOR EACH STATEMENT EXECUTE FUNCTION log_write_takes_append_lock();
CREATE TRIGGER command_outcomes_take_append_lock BEFORE INSERT ON command_outcomes
  FOR EACH STATEMENT EXECUTE FUNCTION log_write_takes_append_lock();

-- The commit-safe horizon: the oldest transaction that was running when this statement's snapshot was
-- taken and that may still write events; the snapshot's xmax when there is none. Of the transactions
-- running at the snapshot, one is passed over only when the lock table, read once and after the
-- snapshot, shows it still running without the append lock: it cannot write an event any more. One that
-- ended meanwhile, or holds the lock, bounds the horizon: its events are not in this snapshot.
-- Read it once per statement (a CTE), not per row.
CREATE FUNCTION log_horizon() RETURNS xid8 LANGUAGE sql STABLE AS $$
  WITH snap AS (SELECT pg_current_snapshot() AS s),
  locks AS MATERIALIZED (
    SELECT locktype, mode, database, transactionid, virtualtransaction, classid, objid, objsubid, granted
    FROM pg_locks
  ),
  never_writing AS (
    SELECT t.transactionid FROM locks t
    -- A transaction's own id lock (others only wait for it, or briefly hold it Share after it ended).
    WHERE t.locktype = 'transactionid' AND t.mode = 'ExclusiveLock' AND t.granted
      AND NOT EXISTS (
        SELECT 1 FROM locks a
        WHERE a.locktype = 'advisory' AND a.virtualtransaction = t.virtualtransaction
          AND a.classid = 1380537921 AND a.objid = 1 AND a.objsubid = 2
          -- Advisory locks are per database: another database's writers write another log.
          AND a.database = (SELECT oid FROM pg_database WHERE datname = current_database()))
  )
  SELECT least(
    pg_snapshot_xmax(snap.s),
    (SELECT min(x) FROM pg_snapshot_xip(snap.s) AS x
     WHERE NOT EXISTS (SELECT 1 FROM never_writing n WHERE n.transactionid = xid(x))))
  FROM snap
$$;
