-- crm's contact merges (contact.merged / contact.merge_undone): one row per merge, listing what automation moved
-- from the source contact to the target, so an undo moves exactly those rows back and a redelivered event changes
-- nothing more. An undo that arrives before its merge leaves the row undone with nothing moved, so the late merge
-- is ignored.
CREATE TABLE contact_merges (
  merge_id   uuid PRIMARY KEY,
  org_id     uuid NOT NULL,
  target_id  uuid NOT NULL,
  source_id  uuid NOT NULL,
  -- {"runs": [run ids], "recipients": [campaign ids of rows repointed to the target],
  --  "setAside": [{"campaignId", "contactId", "error"}: pending rows the merge marked skipped]}
  moved      jsonb NOT NULL DEFAULT '{}',
  merged_at  timestamptz,
  undone_at  timestamptz
);

-- A recipient row a merge moved to another contact keeps the contact id its send key (clientMessageId) and email
-- links were made with, so a send in flight when the row moved is recognised, not repeated, and old links still work.
ALTER TABLE campaign_recipients ADD COLUMN original_contact_id uuid;
CREATE INDEX campaign_recipients_original_idx ON campaign_recipients (campaign_id, original_contact_id) WHERE original_contact_id IS NOT NULL;
