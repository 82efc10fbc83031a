-- What the request that sent a command said (a digest of its route and fields, the key and form token left
-- out): a retry says the same, so a key that comes back with a different request is refused instead of
-- answered with the first request's outcome. Null for commands sent without a request (CLI, older rows).
ALTER TABLE command_inbox ADD COLUMN request_digest text;
