-- Uploads stream to disk: the SHA-256 computed on the way is kept (the download's ETag). Nullable without a
-- default, so adding it rewrites nothing; files stored before it have none.
ALTER TABLE attachments ADD COLUMN sha256 text;
-- The per-org quota sums an organization's sizes (index-only with size included).
CREATE INDEX attachments_org_idx ON attachments (org_id) INCLUDE (size);
-- The orphan sweeper reads the oldest uploads not sent with any message.
CREATE INDEX attachments_orphan_idx ON attachments (uploaded_at) WHERE message_id IS NULL;
