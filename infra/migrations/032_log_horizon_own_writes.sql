-- A reader's own transaction bounds its horizon too when it writes the log (decision 0028). A snapshot
-- never lists its own transaction as running, so log_horizon() (migration 031) passed over the reader's
-- own id: a transaction that wrote events and then read the log read its own uncommitted events once a
-- later transaction had committed (the horizon was the snapshot's xmax). Before 0028 the horizon was the
-- snapshot's xmin, which counts the own id. Now the own id is one more running transaction, passed over
-- by the same rule as the others: only when the lock table shows it without the append lock.
CREATE OR REPLACE FUNCTION log_horizon() RETURNS xid8 LANGUAGE sql STABLE AS $$
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
    -- Of those running at the snapshot: the ones it lists, and this transaction itself once it has an id
    -- (a snapshot never lists its own transaction; with none running, the lock table is not read).
    (SELECT min(r.x) FROM (
       SELECT x FROM pg_snapshot_xip(snap.s) AS x
       UNION ALL
       SELECT x FROM pg_current_xact_id_if_assigned() AS x WHERE x IS NOT NULL
     ) AS r(x)
     WHERE NOT EXISTS (SELECT 1 FROM never_writing n WHERE n.transactionid = xid(r.x))))
  FROM snap
$$;
