-- A search reads text as the name check does (decision 0024), the same on Postgres and the embedded
-- database. The searched text is
--   NFKC-normalized: Ⓐ is A, ﬁ is fi, a fullwidth Ｆ is F, a no-break space a space (the embedded
--     database's lower() does not know the circled letters, so "ⓐcme" found "Ⓐcme" only on Postgres);
--   lower-cased, with the final sigma ς as σ: lower() turns a capital Σ into σ but keeps a typed ς, so
--     "Οδος" (written with ς) was not found by "ΟΔΟΣ" or "οδοσ";
--   without invisible characters (Unicode's Default_Ignorable_Code_Point: zero-width spaces and joiners,
--     soft hyphens, variation selectors…), so "Zero<U+200B>Width" is found by "ZeroWidth".
-- search_fold is that folding, the one definition of it: the stored search_text columns, the users'
-- index expression and the search term (foldedSearch, projections/search-pages.ts) all call it.
--
-- Text that is all ASCII is only lower-cased: NFKC leaves ASCII as it is, and neither ς nor any
-- invisible character is ASCII. That path is ~6x cheaper than the full folding (100,000 rows of 1.1 kB
-- of ASCII: lower 0.46 s, the full folding 3.9 s, search_fold 0.5-0.7 s), and a rebuild computes it for
-- every row it writes. octet_length = char_length means "all ASCII" in UTF-8, the only encoding in which
-- normalize() works at all.
CREATE FUNCTION search_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
  WHEN octet_length(t) = char_length(t) THEN lower(t)
  ELSE regexp_replace(translate(lower(normalize(t, NFKC)), 'ς', 'σ'),
    '[\u00AD\u034F\u061C\u115F-\u1160\u17B4-\u17B5\u180B-\u180F\u200B-\u200F\u202A-\u202E\u2060-\u206F\u3164\uFE00-\uFE0F\uFEFF\uFFA0\uFFF0-\uFFF8\U0001BCA0-\U0001BCA3\U0001D173-\U0001D17A\U000E0000-\U000E0FFF]', '', 'g')
END;

-- Rewrites both tables once; the trigram indexes are built anew.
ALTER TABLE competitor_list DROP COLUMN search_text;
ALTER TABLE competitor_list ADD COLUMN search_text text GENERATED ALWAYS AS (search_fold(
  name || ' ' || coalesce(website, '') || ' ' || segment_name || ' ' || strengths || ' ' || weaknesses || ' ' || pricing || ' ' || general
)) STORED;
CREATE INDEX competitor_list_search ON competitor_list USING gin (search_text gin_trgm_ops);

ALTER TABLE audit_log DROP COLUMN search_text;
ALTER TABLE audit_log ADD COLUMN search_text text GENERATED ALWAYS AS (search_fold(
  actor_name || ' ' || type || ' ' || coalesce(competitor_name, '') || ' ' || summary
)) STORED;
CREATE INDEX audit_log_search ON audit_log USING gin (search_text gin_trgm_ops);

-- The user list has no stored search text: its trigram index is on the expression user-list.queries.ts
-- compares (userSearchText), which must stay exactly this for the planner to use it.
DROP INDEX user_list_search;
CREATE INDEX user_list_search ON user_list USING gin (search_fold(display_name || ' ' || email || ' ' || role) gin_trgm_ops);
