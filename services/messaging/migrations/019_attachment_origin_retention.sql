-- Issue #27 item 5: the gates on attachments live with the attachments.

-- Where a file came from: `upload` (a user or an API key uploaded it to send) or `inbound` (the connector stored a
-- file that came from the network: a contact's, or one typed on the account's own phone). Each counts against its own
-- quota (ATTACHMENTS_QUOTA_MB, ATTACHMENTS_INBOUND_QUOTA_MB), so strangers sending files can never fill the space
-- agents upload into. A constant default rewrites nothing.
ALTER TABLE attachments ADD COLUMN origin text NOT NULL DEFAULT 'upload' CHECK (origin IN ('upload', 'inbound'));
-- Existing rows: a file without an uploader that belongs to a message stored from the network came from the connector.
-- An unlinked file without an uploader (an API key's upload, or a connector's whose message is not stored yet) stays
-- `upload`: nothing tells them apart, and either kind is swept within ATTACHMENTS_ORPHAN_HOURS unless sent.
UPDATE attachments a SET origin = 'inbound'
  FROM messages m
  WHERE m.id = a.message_id AND a.uploaded_by IS NULL AND (m.direction = 'inbound' OR m.source = 'phone');

-- When ATTACHMENTS_RETENTION_DAYS took the file's bytes away: the row stays, so its message still lists the file
-- (as expired), and the download answers 410 attachment_expired. Expired bytes count against no quota.
ALTER TABLE attachments ADD COLUMN expired_at timestamptz;

-- Each quota sums one origin of one org's live files (index-only with size included); it replaces the per-org sum.
CREATE INDEX attachments_quota_idx ON attachments (org_id, origin) INCLUDE (size) WHERE expired_at IS NULL;
DROP INDEX attachments_org_idx;
-- The retention sweep and its nearest-due question read the oldest files that still have their bytes.
CREATE INDEX attachments_retention_idx ON attachments (uploaded_at) WHERE expired_at IS NULL;

-- The sweeps run on the timer facility (ARCHITECTURE.md, Timers): each instance sleeps until the nearest file falls due,
-- woken early by a NOTIFY on messaging_attachments_due. An upload held by a scheduled message is not due while the row
-- waits; when the row is cancelled or fails, the upload becomes an orphan that may be due already, so its sweep must
-- wake. A trigger, like 012's, so that no path that ends a scheduled row can forget it.
CREATE FUNCTION scheduled_messages_release_uploads() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  PERFORM pg_notify('messaging_attachments_due', '');
  RETURN NULL;
END
$$;

CREATE TRIGGER scheduled_messages_release_uploads AFTER UPDATE OF status ON scheduled_messages
  FOR EACH ROW WHEN (OLD.status = 'scheduled' AND NEW.status IN ('cancelled', 'failed') AND cardinality(NEW.attachment_ids) > 0)
  EXECUTE FUNCTION scheduled_messages_release_uploads();
