-- A competitor's history pages in constant time, however long the history (issue 13: deep pages under
-- every sort). The history counted every version of the competitor for each page and walked an OFFSET
-- over them: at 1,000,000 versions of one competitor (a feed that rewrites a note every minute for two
-- years) every page took 0.4 s for the count and the last one 0.8 s more.
--
-- Now each row carries its place in the competitor's history, `seq` (1, 2, … in the order of the log),
-- kept by the projection. The whole history is `seq` 1..max: its count is max(seq) and page n is a
-- range of it. One note's history is `note_version` 1..max (the decider numbers a note's versions one by
-- one), so a page of one note is a range of the primary key. Both read by index, a few rows each.
--
-- A rebuild under way fills a shadow made before this column existed: it starts over (its checkpoint
-- goes with it).
ALTER TABLE note_history ADD COLUMN seq bigint;
UPDATE note_history h SET seq = n.seq
FROM (
  SELECT competitor_id, column_name, note_version,
         row_number() OVER (PARTITION BY competitor_id ORDER BY position) AS seq
  FROM note_history
) n
WHERE h.competitor_id = n.competitor_id AND h.column_name = n.column_name AND h.note_version = n.note_version;
ALTER TABLE note_history ALTER COLUMN seq SET NOT NULL;
ALTER TABLE note_history ADD CONSTRAINT note_history_seq UNIQUE (competitor_id, seq);
-- Nothing reads by time any more (the history is in the log's order, which per competitor is the order
-- of its changes: every change of a competitor is appended after the one before it committed).
DROP INDEX note_history_time;
DROP TABLE IF EXISTS note_history__shadow;
