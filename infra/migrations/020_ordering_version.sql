-- Drag-sorting: the version of the ordering stream that the competitor list's ranks reflect. A drop
-- sends it back as `expect`; one row.
CREATE TABLE competitor_list_order (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  version integer NOT NULL
);
