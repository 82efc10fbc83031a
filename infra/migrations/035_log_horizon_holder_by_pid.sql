-- A reader of the log could skip a writer's events that committed while it read (decision 0028): seen in
-- tests as one event in ~450 missed by a reader under concurrent writers, in 2 of 9 runs of the
-- projections contract on a loaded machine.
--
-- log_horizon() passed over a running transaction when the lock table, read after the snapshot, showed
-- its id lock without an append lock of the same holder, matched by virtual transaction id. But pg_locks
-- computes a lock's virtual transaction id from its holder's current state, read without a lock on the
-- holder: a writer committing resets its local transaction id (ProcArrayEndTransaction) before it
-- releases its locks, so a read of the lock table in between can see its id lock under "B/123" and its
-- append lock under "B/0". The pair did not match, and the writer was passed over as one that cannot
-- write, though its events were not in the reader's snapshot (taken while it was still running): the
-- horizon moved past them, and the reader's checkpoint with it.
--
-- Two changes, each enough for that race, and together also safe whatever order a transaction's locks
-- are released in at its end:
-- 1. The holder is matched by process id, which a backend keeps for its whole life. A backend runs one
--    transaction at a time, and a lock table read sees all of a transaction's locks or none (they are
--    released under the partition locks the read holds). A prepared transaction has no process (pid is
--    null): its locks are matched by virtual transaction id, which never changes for it.
-- 2. A transaction is passed over only if it is still running when looked up after the lock table was
--    read (pg_xact_status, evaluated per row of the read, so after it). One that ended meanwhile may have
--    committed events this snapshot does not show: it bounds the horizon, as one that ended before the
--    read always did.
CREATE OR REPLACE FUNCTION log_horizon() RETURNS xid8 LANGUAGE sql STABLE AS $$
  WITH snap AS (SELECT pg_current_snapshot() AS s),
  locks AS MATERIALIZED (
    SELECT locktype, mode, database, transactionid, virtualtransaction, pid, classid, objid, objsubid, granted
    FROM pg_locks
  ),
  never_writing AS (
    SELECT t.transactionid FROM locks t
    -- A transaction's own id lock (others only wait for it, or briefly hold it Share after it ended).
    WHERE t.locktype = 'transactionid' AND t.mode = 'ExclusiveLock' AND t.granted
      AND NOT EXISTS (
        SELECT 1 FROM locks a
        WHERE a.locktype = 'advisory'
          AND (a.pid = t.pid OR (t.pid IS NULL AND a.pid IS NULL AND a.virtualtransaction = t.virtualtransaction))
          AND a.classid = 1380537921 AND a.objid = 1 AND a.objsubid = 2
          -- Advisory locks are per database: another database's writers write another log.
          AND a.database = (SELECT oid FROM pg_database WHERE datname = current_database()))
  )
  SELECT least(
    pg_snapshot_xmax(snap.s),
    -- Of those running at the snapshot: the ones it lists, and this transaction itself once it has an id
    -- (a snapshot never lists its own transaction; with none running, the lock table is not read).
    (SELECT min(r.x) FROM (
       SELECT x FROM pg_snapshot_xip(snap.s) AS x
       UNION ALL
       SELECT x FROM pg_current_xact_id_if_assigned() AS x WHERE x IS NOT NULL
     ) AS r(x)
     WHERE NOT EXISTS (
       SELECT 1 FROM never_writing n
       WHERE n.transactionid = xid(r.x)
         -- Looked up per row of the lock table's read, so after it: written against n, the planner
         -- cannot evaluate it first (a condition on r.x alone may run before the read, as a gate).
         AND CASE WHEN n.transactionid = xid(r.x) THEN pg_xact_status(r.x) END = 'in progress')))
  FROM snap
$$;
