-- The version of the ordering stream that the segment board's order reflects. The board page shows the
-- segment order (this projection) and the competitors' order (competitor-list, competitor_list_order),
-- which commit separately: a drop must expect the older of the two, so a board showing a segment order
-- from before a colleague's move is refused as stale instead of putting the segments back. One row.
CREATE TABLE segment_board_order (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  version integer NOT NULL
);
-- Exact for an existing board: the newest ordering event this projection has already passed.
INSERT INTO segment_board_order (id, version)
SELECT true, coalesce(max(e.stream_version), 0)
FROM events e, projection_checkpoints c
WHERE c.projection = 'segment-board' AND e.stream = 'ordering'
  AND (e.transaction_id, e.position) <= (c.transaction_id, c.position)
HAVING count(*) > 0;
