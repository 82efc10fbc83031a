-- The refusal of a late write to the log says what happened and what to do (decision 0028). Migration
-- 031's message named one cause only ("wrote before it wrote to the event log"), but a transaction also
-- gets there by rolling back to a savepoint taken before its first write of the log: the rollback
-- releases the append lock (and this function's mark of it) while the transaction keeps its id, so a
-- retry of the write inside the same transaction is refused, and was told to "call log_append_lock()
-- first", which it had. Same rule, same error code; only the message and a hint change.
CREATE OR REPLACE FUNCTION log_append_lock() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('rivals.log_append_lock', true) = 'held' THEN
    RETURN;
  END IF;
  IF pg_current_xact_id_if_assigned() IS NOT NULL THEN
    RAISE EXCEPTION 'this transaction can no longer write to the event log: it has written something '
      'without holding the log''s append lock (it wrote elsewhere first, or rolled back to a savepoint '
      'taken before its first write of the log)'
      USING ERRCODE = 'object_not_in_prerequisite_state',
        HINT = 'Retry in a new transaction, or call log_append_lock() at its start, before any write '
          'and outside any savepoint it may roll back to.';
  END IF;
  PERFORM pg_advisory_xact_lock_shared(1380537921, 1);
  PERFORM set_config('rivals.log_append_lock', 'held', true);
END
$$;
