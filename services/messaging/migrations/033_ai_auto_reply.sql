-- Guarded AI auto-reply (issue #32 item 5). ai owns the settings (PUT /api/v1/ai/config autoReply); this is messaging's
-- copy of what it needs to decide whether a customer's message concerns the assistant at all, kept from
-- `ai.auto_reply_changed` (the newest `updated_at` wins). Every write NOTIFYs messaging_ai_auto_reply_changed, so each
-- instance reloads its in-memory set of accounts: a message on any other account costs nothing more.
CREATE TABLE ai_auto_reply_settings (
  org_id uuid PRIMARY KEY,
  enabled boolean NOT NULL,
  account_ids uuid[] NOT NULL,
  only_outside_hours boolean NOT NULL,
  max_replies integer NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE FUNCTION ai_auto_reply_settings_notify() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('messaging_ai_auto_reply_changed', NEW.org_id::text);
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER ai_auto_reply_settings_changed AFTER INSERT OR UPDATE ON ai_auto_reply_settings
  FOR EACH ROW EXECUTE FUNCTION ai_auto_reply_settings_notify();

-- A customer's message for the assistant: a due row (ARCHITECTURE.md, Timers) written in the inbound batch's
-- transaction, handled after commit by whichever instance claims it (FOR UPDATE SKIP LOCKED under a lease; NOTIFY
-- messaging_ai_auto_replies_due wakes them). One pending row per conversation: a burst of messages is answered once,
-- for the latest. The outcome stays: `handed_off` rows keep the assistant quiet until a person replies.
CREATE TABLE ai_auto_replies (
  id              uuid PRIMARY KEY,
  org_id          uuid NOT NULL,
  conversation_id uuid NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
  message_id      uuid NOT NULL,
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'replied', 'handed_off', 'skipped', 'failed')),
  -- replied: the engine; handed_off: why (low_confidence, asked_for_person, max_replies, quota_exhausted, ai_unavailable);
  -- skipped: why (business_hours, off, waiting_for_person, not_found).
  reason          text,
  reply_message_id uuid,
  due_at          timestamptz NOT NULL DEFAULT now(),
  lease_until     timestamptz,
  attempts        int NOT NULL DEFAULT 0,
  created_at      timestamptz NOT NULL DEFAULT now(),
  done_at         timestamptz
);
CREATE UNIQUE INDEX ai_auto_replies_pending_idx ON ai_auto_replies (conversation_id) WHERE status = 'pending';
CREATE INDEX ai_auto_replies_due_idx ON ai_auto_replies (due_at) WHERE status = 'pending';
CREATE INDEX ai_auto_replies_handoff_idx ON ai_auto_replies (conversation_id, done_at DESC) WHERE status = 'handed_off';

-- The assistant's private notes (its sources, why it handed a conversation over) have no user as author.
ALTER TABLE conversation_notes ALTER COLUMN author_id DROP NOT NULL;
