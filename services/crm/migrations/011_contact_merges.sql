-- Reversible contact merges (issue #15 item 5). The source contact's row leaves `contacts` (so every read, list,
-- count and unique index forgets it without a filter of its own) and is kept here as it was; undo puts it back
-- with the same id. What the merge moved to the target is listed by id per table, so undo moves back exactly
-- those rows (rows created on the target since stay there).
CREATE TABLE contact_merges (
  id            uuid PRIMARY KEY,
  org_id        uuid NOT NULL,
  target_id     uuid NOT NULL,
  source_id     uuid NOT NULL,
  -- The source's contacts row (to_jsonb), restored by undo.
  source_row    jsonb NOT NULL,
  -- The target fields the merge changed: {column: value before}, and {column: value the merge wrote}, so undo
  -- restores a field only while it still holds what the merge wrote (a later edit wins).
  target_before jsonb NOT NULL,
  target_after  jsonb NOT NULL,
  -- Ids moved to the target, per table: {"contact_notes": [...], "appointments": [...], ...}.
  moved         jsonb NOT NULL,
  -- Rows of the source that cannot move (its scoring state and facts), kept to be restored by undo.
  kept          jsonb NOT NULL,
  merged_by     uuid,
  merged_at     timestamptz NOT NULL DEFAULT now(),
  undone_at     timestamptz,
  undone_by     uuid
);
CREATE INDEX contact_merges_org_idx ON contact_merges (org_id, merged_at DESC);
-- "Was this contact merged away since?" (undo refuses while the target itself is merged into another one).
CREATE INDEX contact_merges_source_idx ON contact_merges (org_id, source_id) WHERE undone_at IS NULL;
