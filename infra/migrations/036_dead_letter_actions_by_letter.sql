-- What became of a dead letter no longer listed: /ops answers a Retry or Discard of a letter that another
-- admin (another tab) already acted on with what was done and by whom, rather than "retried or
-- discarded". The letter's row is gone by then, and its action's stream is named by a digest of its id
-- and command id, so the action is found by the letter id in the event's data. Only these two event types
-- are indexed: the index stays as small as the number of operator actions.
CREATE INDEX events_dead_letter_actions ON events ((data->>'deadLetterId'), position)
  WHERE type IN ('DeadLetterRetried', 'DeadLetterDiscarded');
