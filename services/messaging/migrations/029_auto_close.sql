-- Auto-close (issue #29 item 3): one due timer per open conversation whose last message is ours, while the org has
-- inbox_settings.auto_close_after_minutes (ARCHITECTURE.md, Timers). A send into the conversation writes (or moves)
-- it in the send's transaction; a message from the contact deletes it in the inbound transaction; closing by the
-- timer deletes it. Each instance sleeps until the nearest due_at, claims due rows with FOR UPDATE SKIP LOCKED
-- under a lease and is woken early by a NOTIFY on messaging_auto_close_due when an earlier one is written.
CREATE TABLE conversation_auto_close (
  conversation_id uuid PRIMARY KEY REFERENCES conversations (id) ON DELETE CASCADE,
  org_id          uuid NOT NULL,
  -- New on every arming: the idempotency key of the auto-close message, and how the closer knows the row it
  -- claimed is still the one in the table (a send meanwhile re-armed it).
  arming_id       uuid NOT NULL,
  due_at          timestamptz NOT NULL,
  lease_until     timestamptz,
  attempts        int NOT NULL DEFAULT 0
);
CREATE INDEX conversation_auto_close_due_idx ON conversation_auto_close (due_at);
-- A change of the setting re-plans one org's rows.
CREATE INDEX conversation_auto_close_org_idx ON conversation_auto_close (org_id);
