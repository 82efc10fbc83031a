-- The user list's search (a substring of name, email and role) through a trigram index, as the
-- competitor list and the audit log have: at 100k users a search was a sequential scan (~300 ms).
CREATE INDEX user_list_search ON user_list USING gin (lower(display_name || ' ' || email || ' ' || role) gin_trgm_ops);
