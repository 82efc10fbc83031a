-- Folds that need the whole log (the ordering decider: who is live, in which segment, in what order)
-- are saved now and then with the commit-order checkpoint they reached, so a new worker starts from
-- the newest one and reads only later events. `fold_version` names the folding code: a snapshot made by
-- other rules is ignored. Rows are replaced, never deleted; losing them only costs one long read.
CREATE TABLE fold_snapshots (
  name text PRIMARY KEY,
  fold_version integer NOT NULL,
  transaction_id xid8 NOT NULL,
  position bigint NOT NULL,
  state jsonb NOT NULL,
  saved_at timestamptz NOT NULL DEFAULT now()
);
