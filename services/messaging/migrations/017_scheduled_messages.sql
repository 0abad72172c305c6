-- Scheduled messages (issue #26): a message written now and sent into its conversation at send_at, through the
-- ordinary send pipeline. A row is a due timer (ARCHITECTURE.md, Timers): each instance sleeps until the nearest
-- due_at of a scheduled row, claims it with FOR UPDATE SKIP LOCKED under a lease, and is woken early by a NOTIFY
-- on messaging_scheduled_due when an earlier one is written.
CREATE TABLE scheduled_messages (
  id                uuid PRIMARY KEY,
  org_id            uuid NOT NULL,
  conversation_id   uuid NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
  content           text NOT NULL,
  content_type      text NOT NULL DEFAULT 'text',
  -- Uploads sent with it (attachments.id); the orphan sweeper leaves them alone while the row is scheduled.
  attachment_ids    uuid[] NOT NULL DEFAULT '{}',
  send_at           timestamptz NOT NULL,
  cancel_if_replied boolean NOT NULL DEFAULT false,
  status            text NOT NULL DEFAULT 'scheduled' CHECK (status IN ('scheduled', 'sent', 'cancelled', 'failed')),
  -- The stored message once sent (messages.id; the send used this row's id as its idempotency key).
  message_id        uuid,
  error             text,
  cancel_reason     text,
  created_by        uuid,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  -- When the timer fires: send_at, or later after a send that may be retried (outcome unknown, rate limited).
  due_at            timestamptz NOT NULL,
  -- A claimed row is one instance's until then; past it (the instance died) another claims it again.
  lease_until       timestamptz,
  attempts          int NOT NULL DEFAULT 0
);

-- The timer's claim and its nearest-due question read only the scheduled rows.
CREATE INDEX scheduled_messages_due_idx ON scheduled_messages (due_at) WHERE status = 'scheduled';
-- GET /scheduled-messages lists an org's rows (optionally of one conversation), newest send time first.
CREATE INDEX scheduled_messages_org_idx ON scheduled_messages (org_id, send_at DESC, id DESC);
CREATE INDEX scheduled_messages_conversation_idx ON scheduled_messages (conversation_id);
-- An inbound message cancels its conversation's cancelIfReplied rows: a probe of this (usually empty) index.
CREATE INDEX scheduled_messages_reply_idx ON scheduled_messages (conversation_id) WHERE status = 'scheduled' AND cancel_if_replied;
-- The orphan sweeper asks whether a waiting scheduled message still holds an upload.
CREATE INDEX scheduled_messages_attachments_idx ON scheduled_messages USING gin (attachment_ids) WHERE status = 'scheduled';
