-- The public API's incremental sync (issue #15): contacts and appointments changed since a time, page by page in
-- (updated_at, id) order. updated_at is set on every change of a record's own fields (the update paths in
-- src/db set it; derived values such as lastActivity and leadScore do not count as a change).
CREATE INDEX contacts_updated_idx ON contacts (org_id, updated_at, id);
CREATE INDEX appointments_updated_idx ON appointments (org_id, updated_at, id);
