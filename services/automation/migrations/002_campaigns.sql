-- Campaigns: one message template sent to every member of a crm customer list, paced, through messaging.
-- States: draft → active ⇄ paused → completed; draft/active/paused → cancelled.
CREATE TABLE campaigns (
  id               uuid PRIMARY KEY,
  org_id           uuid NOT NULL,
  name             text NOT NULL,
  description      text NOT NULL DEFAULT '',
  type             text NOT NULL DEFAULT 'broadcast' CHECK (type IN ('broadcast')),
  list_id          uuid NOT NULL,
  template_id      uuid NOT NULL,
  -- The template text as it was at activation: editing or deleting the template later changes nothing here.
  content          text,
  variables        jsonb NOT NULL DEFAULT '{}',
  schedule         timestamptz,
  status           text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'active', 'paused', 'completed', 'cancelled')),
  -- Drafts: the list's live count when last asked; from activation: the recipients snapshotted.
  contact_count    integer NOT NULL DEFAULT 0,
  -- Snapshot of the list's members into campaign_recipients, a page at a time (keyset cursor on contact id).
  snapshot_done    boolean NOT NULL DEFAULT false,
  snapshot_after   text NOT NULL DEFAULT '',
  sent_count       integer NOT NULL DEFAULT 0,
  failed_count     integer NOT NULL DEFAULT 0,
  skipped_count    integer NOT NULL DEFAULT 0,
  replied_count    integer NOT NULL DEFAULT 0,
  -- Pacing: no send before this (CAMPAIGN_SEND_PER_MINUTE, backoff when messaging is unreachable).
  next_send_at     timestamptz NOT NULL DEFAULT now(),
  backoff_level    integer NOT NULL DEFAULT 0,
  -- The sender instance working on the campaign, until when (a dead instance's campaigns come back after it).
  lease_owner      uuid,
  lease_until      timestamptz,
  last_error       text NOT NULL DEFAULT '',
  created_by       uuid,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  activated_at     timestamptz,
  completed_at     timestamptz,
  cancelled_at     timestamptz
);
CREATE INDEX campaigns_org_idx ON campaigns (org_id, created_at DESC, id DESC);
CREATE INDEX campaigns_template_idx ON campaigns (org_id, template_id) WHERE status = 'draft';
-- The sender's question: which active campaigns are due?
CREATE INDEX campaigns_due_idx ON campaigns (next_send_at) WHERE status = 'active';

-- One row per (campaign, contact): the snapshot of the list at activation and the durable send queue.
CREATE TABLE campaign_recipients (
  campaign_id        uuid NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  contact_id         uuid NOT NULL,
  org_id             uuid NOT NULL,
  name               text NOT NULL DEFAULT '',
  phone              text NOT NULL DEFAULT '',
  email              text NOT NULL DEFAULT '',
  chatnet_uid        text NOT NULL DEFAULT '',
  contact_status     text NOT NULL DEFAULT '',
  tags               text[] NOT NULL DEFAULT '{}',
  assigned_user_id   text NOT NULL DEFAULT '',
  status             text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed', 'skipped')),
  error              text NOT NULL DEFAULT '',
  attempts           integer NOT NULL DEFAULT 0,
  next_attempt_at    timestamptz NOT NULL DEFAULT now(),
  -- Fixed before the first send attempt, so a retry goes to the same conversation with the same content
  -- (messaging de-duplicates on the clientMessageId only for an identical request).
  conversation_id    uuid,
  chatnet_account_id uuid,
  message_id         uuid,
  sent_at            timestamptz,
  replied_at         timestamptz,
  updated_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (campaign_id, contact_id)
);
CREATE INDEX campaign_recipients_due_idx ON campaign_recipients (campaign_id, next_attempt_at, contact_id) WHERE status = 'pending';
CREATE INDEX campaign_recipients_status_idx ON campaign_recipients (campaign_id, status, contact_id);
-- A reply from a contact: which sent, unreplied campaign messages does it answer?
CREATE INDEX campaign_recipients_reply_idx ON campaign_recipients (org_id, contact_id) WHERE status = 'sent' AND replied_at IS NULL;

-- Messaging said "too many sends on this chat-network account, retry after N s" (or the account is not
-- connected): every campaign of the org leaves that account alone until then.
CREATE TABLE campaign_account_holds (
  org_id      uuid NOT NULL,
  account_id  uuid NOT NULL,
  until       timestamptz NOT NULL,
  reason      text NOT NULL DEFAULT '',
  PRIMARY KEY (org_id, account_id)
);
