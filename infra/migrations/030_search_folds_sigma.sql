-- A search finds Greek as it is written (decision 0024). `lower()` turns a capital Σ into σ but keeps a
-- final ς, so "Οδος" (written with ς) was not found by "ΟΔΟΣ" or "οδοσ", nor "ΟΔΟΣ" by "οδος". The
-- searched text and the search (`searchFold` in projections/search-pages.ts) now both fold ς to σ, as
-- the name check does (competitorNameKey). Rewrites both tables once; the trigram indexes are built anew.
ALTER TABLE competitor_list DROP COLUMN search_text;
ALTER TABLE competitor_list ADD COLUMN search_text text GENERATED ALWAYS AS (
  translate(lower(name || ' ' || coalesce(website, '') || ' ' || segment_name || ' ' || strengths || ' ' || weaknesses || ' ' || pricing || ' ' || general), 'ς', 'σ')
) STORED;
CREATE INDEX competitor_list_search ON competitor_list USING gin (search_text gin_trgm_ops);

ALTER TABLE audit_log DROP COLUMN search_text;
ALTER TABLE audit_log ADD COLUMN search_text text GENERATED ALWAYS AS (
  translate(lower(actor_name || ' ' || type || ' ' || coalesce(competitor_name, '') || ' ' || summary), 'ς', 'σ')
) STORED;
CREATE INDEX audit_log_search ON audit_log USING gin (search_text gin_trgm_ops);

DROP INDEX user_list_search;
CREATE INDEX user_list_search ON user_list
  USING gin (translate(lower(display_name || ' ' || email || ' ' || role), 'ς', 'σ') gin_trgm_ops);
