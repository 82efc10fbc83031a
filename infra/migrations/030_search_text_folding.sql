-- A search reads text as the name check does (decision 0024), the same on Postgres and the embedded
-- database. The searched text is
--   NFKC-normalized: Ⓐ is A, ﬁ is fi, a fullwidth Ｆ is F, a no-break space a space (the embedded
--     database's lower() does not know the circled letters, so "ⓐcme" found "Ⓐcme" only on Postgres);
--   lower-cased, with the final sigma ς as σ: lower() turns a capital Σ into σ but keeps a typed ς, so
--     "Οδος" (written with ς) was not found by "ΟΔΟΣ" or "οδοσ";
--   without invisible characters (Unicode's Default_Ignorable_Code_Point: zero-width spaces and joiners,
--     soft hyphens, variation selectors…), so "Zero<U+200B>Width" is found by "ZeroWidth".
-- The search is folded the same way (containsPattern and foldedSearch, projections/search-pages.ts).
-- Rewrites both tables once; the trigram indexes are built anew.
ALTER TABLE competitor_list DROP COLUMN search_text;
ALTER TABLE competitor_list ADD COLUMN search_text text GENERATED ALWAYS AS (
  regexp_replace(translate(lower(normalize(
    name || ' ' || coalesce(website, '') || ' ' || segment_name || ' ' || strengths || ' ' || weaknesses || ' ' || pricing || ' ' || general,
    NFKC)), 'ς', 'σ'), '[\u00AD\u034F\u061C\u115F-\u1160\u17B4-\u17B5\u180B-\u180F\u200B-\u200F\u202A-\u202E\u2060-\u206F\u3164\uFE00-\uFE0F\uFEFF\uFFA0\uFFF0-\uFFF8\U0001BCA0-\U0001BCA3\U0001D173-\U0001D17A\U000E0000-\U000E0FFF]', '', 'g')
) STORED;
CREATE INDEX competitor_list_search ON competitor_list USING gin (search_text gin_trgm_ops);

ALTER TABLE audit_log DROP COLUMN search_text;
ALTER TABLE audit_log ADD COLUMN search_text text GENERATED ALWAYS AS (
  regexp_replace(translate(lower(normalize(
    actor_name || ' ' || type || ' ' || coalesce(competitor_name, '') || ' ' || summary,
    NFKC)), 'ς', 'σ'), '[\u00AD\u034F\u061C\u115F-\u1160\u17B4-\u17B5\u180B-\u180F\u200B-\u200F\u202A-\u202E\u2060-\u206F\u3164\uFE00-\uFE0F\uFEFF\uFFA0\uFFF0-\uFFF8\U0001BCA0-\U0001BCA3\U0001D173-\U0001D17A\U000E0000-\U000E0FFF]', '', 'g')
) STORED;
CREATE INDEX audit_log_search ON audit_log USING gin (search_text gin_trgm_ops);

-- The user list has no stored search text: its trigram index is on the expression user-list.queries.ts
-- compares (userSearchText), which must stay exactly this for the planner to use it.
DROP INDEX user_list_search;
CREATE INDEX user_list_search ON user_list USING gin ((
  regexp_replace(translate(lower(normalize(display_name || ' ' || email || ' ' || role, NFKC)), 'ς', 'σ'), '[\u00AD\u034F\u061C\u115F-\u1160\u17B4-\u17B5\u180B-\u180F\u200B-\u200F\u202A-\u202E\u2060-\u206F\u3164\uFE00-\uFE0F\uFEFF\uFFA0\uFFF0-\uFFF8\U0001BCA0-\U0001BCA3\U0001D173-\U0001D17A\U000E0000-\U000E0FFF]', '', 'g')
) gin_trgm_ops);
