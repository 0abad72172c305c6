CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- One conversation per chat-network account and external thread. Contact fields are a copy of crm's
-- contact (kept fresh from contact.updated events) so lists and search never call crm.
CREATE TABLE conversations (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  chatnet_account_id uuid NOT NULL,
  thread_type text NOT NULL CHECK (thread_type IN ('user', 'group')),
  thread_id text NOT NULL,
  contact_id uuid,
  -- The network uid the contact is (or will be) linked by: the sender for user threads, the thread for groups.
  contact_chatnet_uid text NOT NULL DEFAULT '',
  contact_name text NOT NULL DEFAULT '',
  contact_avatar text NOT NULL DEFAULT '',
  contact_phone text NOT NULL DEFAULT '',
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived', 'closed')),
  message_count integer NOT NULL DEFAULT 0,
  unread_count integer NOT NULL DEFAULT 0,
  -- Messages from the contact that no reply followed yet.
  unreplied_count integer NOT NULL DEFAULT 0,
  last_message_id uuid,
  last_message_content text,
  last_message_content_type text,
  last_message_sender_name text,
  last_message_at timestamptz,
  last_activity_at timestamptz NOT NULL DEFAULT now(),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, chatnet_account_id, thread_type, thread_id)
);
CREATE INDEX conversations_last_message_idx ON conversations (org_id, last_message_at DESC NULLS LAST, id DESC);
CREATE INDEX conversations_created_idx ON conversations (org_id, created_at DESC, id DESC);
CREATE INDEX conversations_contact_idx ON conversations (org_id, contact_id);
CREATE INDEX conversations_name_trgm_idx ON conversations USING gin (contact_name gin_trgm_ops);

CREATE TABLE messages (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  conversation_id uuid NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  chatnet_account_id uuid NOT NULL,
  -- The network's id: inbound messages are stored once per (account, network id).
  chatnet_message_id text,
  direction text NOT NULL CHECK (direction IN ('inbound', 'outbound')),
  content text NOT NULL,
  content_type text NOT NULL DEFAULT 'text',
  sender_uid text NOT NULL DEFAULT '',
  sender_name text NOT NULL DEFAULT '',
  is_read boolean NOT NULL,
  is_replied boolean NOT NULL DEFAULT false,
  status text NOT NULL DEFAULT 'sent',
  -- ui, public_api, automation, campaign for outbound; chatnet for inbound.
  source text NOT NULL,
  sent_by_user_id uuid,
  client_message_id text,
  sent_at timestamptz NOT NULL,
  -- clock_timestamp, not now(): the moment the row was written, for end-to-end latency measurements.
  stored_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE UNIQUE INDEX messages_network_id_idx ON messages (org_id, chatnet_account_id, chatnet_message_id) WHERE chatnet_message_id IS NOT NULL;
CREATE INDEX messages_conversation_idx ON messages (conversation_id, sent_at DESC, id DESC);
-- Deliberately no more indexes on messages: every inbound message pays for each one. Read/replied flags are
-- updated per conversation, through messages_conversation_idx.

-- File bytes live under ATTACHMENTS_DIR/<org>/<id>; a message links the attachments it carried.
CREATE TABLE attachments (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  filename text NOT NULL,
  content_type text NOT NULL,
  size bigint NOT NULL,
  uploaded_by uuid,
  message_id uuid REFERENCES messages(id) ON DELETE SET NULL,
  uploaded_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX attachments_message_idx ON attachments (message_id) WHERE message_id IS NOT NULL;

CREATE TABLE chat_folders (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  name text NOT NULL,
  color text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX chat_folders_name_idx ON chat_folders (org_id, lower(name));

CREATE TABLE conversation_folders (
  folder_id uuid NOT NULL REFERENCES chat_folders(id) ON DELETE CASCADE,
  conversation_id uuid NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  org_id uuid NOT NULL,
  added_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (folder_id, conversation_id)
);
CREATE INDEX conversation_folders_conversation_idx ON conversation_folders (conversation_id);

CREATE TABLE chat_presets (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  name text NOT NULL,
  content text NOT NULL,
  category text NOT NULL DEFAULT '',
  created_by uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX chat_presets_org_idx ON chat_presets (org_id, category, name);

-- Idempotency of sends: one row per (org, key). `pending` while the network call runs; a repeat of a
-- `sent` key answers with the stored message instead of sending again.
CREATE TABLE send_requests (
  org_id uuid NOT NULL,
  idempotency_key text NOT NULL,
  fingerprint text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'sent')),
  message_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, idempotency_key)
);
CREATE INDEX send_requests_created_idx ON send_requests (created_at);
