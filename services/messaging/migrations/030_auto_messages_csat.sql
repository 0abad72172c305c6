-- Messages the inbox sends by itself (issue #29 items 3 and 6): the out-of-hours reply and the CSAT question. Each is
-- a due row (ARCHITECTURE.md, Timers) written in the transaction that decided it (the inbound batch, the close),
-- sent after commit by whichever instance claims it (FOR UPDATE SKIP LOCKED under a lease), through the ordinary
-- send pipeline with source `auto` and the row's id as idempotency key; NOTIFY messaging_auto_messages_due wakes the
-- instances. dedupe_key keeps one out-of-hours reply per conversation and closed period.
CREATE TABLE auto_messages (
  id              uuid PRIMARY KEY,
  org_id          uuid NOT NULL,
  conversation_id uuid NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
  kind            text NOT NULL CHECK (kind IN ('out_of_hours', 'csat')),
  content         text NOT NULL,
  dedupe_key      text,
  status          text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sent', 'failed')),
  message_id      uuid,
  error           text,
  due_at          timestamptz NOT NULL DEFAULT now(),
  lease_until     timestamptz,
  attempts        int NOT NULL DEFAULT 0,
  created_at      timestamptz NOT NULL DEFAULT now(),
  sent_at         timestamptz
);
CREATE INDEX auto_messages_due_idx ON auto_messages (due_at) WHERE status = 'queued';
CREATE UNIQUE INDEX auto_messages_dedupe_idx ON auto_messages (org_id, dedupe_key) WHERE dedupe_key IS NOT NULL;
CREATE INDEX auto_messages_conversation_idx ON auto_messages (conversation_id);

-- CSAT (issue #29 item 6): one survey per close while csat is enabled. Its question is the auto_messages row of the
-- same id; asked_at is when the question went out (null until then), and the contact's first message within 24 h
-- that is a rating answers it (rating, responded_at); the next one is its comment. The conversation carries the
-- latest answer (csat_*), so every conversation shape shows it without a join.
CREATE TABLE csat_surveys (
  id                 uuid PRIMARY KEY,
  org_id             uuid NOT NULL,
  conversation_id    uuid NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
  chatnet_account_id uuid NOT NULL,
  -- Who handled the conversation when it closed (the analytics' assigneeId).
  assignee_id        uuid,
  asked_at           timestamptz,
  -- Open for an answer until then; a message that is no rating ends it at once (the contact moved on).
  expires_at         timestamptz,
  rating             smallint CHECK (rating BETWEEN 1 AND 5),
  comment            text,
  responded_at       timestamptz,
  -- The comment is taken once: the message after the rating, within the window.
  comment_done       boolean NOT NULL DEFAULT false,
  created_at         timestamptz NOT NULL DEFAULT now()
);
-- A message into a closed conversation asks for its open survey.
CREATE INDEX csat_surveys_conversation_idx ON csat_surveys (conversation_id, asked_at DESC);
-- GET /analytics/csat: an org's questions by the time they were asked.
CREATE INDEX csat_surveys_org_asked_idx ON csat_surveys (org_id, asked_at) WHERE asked_at IS NOT NULL;

ALTER TABLE conversations
  ADD COLUMN csat_rating smallint,
  ADD COLUMN csat_comment text,
  ADD COLUMN csat_responded_at timestamptz;
