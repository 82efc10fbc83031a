-- The audit projection's own record of the segments it has seen (projections never read each other's
-- tables), so its lines name a segment ("Moved Acme from the segment SMB to Enterprise"), not its id.
-- Filled by the audit-log projection's version 2, which an existing install rebuilds blue-green at its
-- next start: its older lines get the names too.
CREATE TABLE audit_log_segments (
  id text PRIMARY KEY,
  name text NOT NULL
);
