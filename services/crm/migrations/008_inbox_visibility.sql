-- What crm needs to apply messaging's inbox visibility to contacts without reading messaging's tables: small
-- projections fed by events. Under "assigned" an agent sees a contact assigned to them or with a conversation
-- they may see (assigned to them, or unassigned on an account whose assignment lists them).

-- inbox_settings.updated (messaging). No row = "all".
CREATE TABLE inbox_visibility (
  org_id uuid PRIMARY KEY,
  agent_visibility text NOT NULL CHECK (agent_visibility IN ('all', 'assigned')),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- conversation.created / conversation.assigned (messaging): one row per conversation.
CREATE TABLE conversation_owners (
  conversation_id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  contact_id uuid,
  assignee_id uuid,
  chatnet_account_id uuid,
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- "Which conversations has this contact": the visibility check of every contact row an agent lists.
CREATE INDEX conversation_owners_contact_idx ON conversation_owners (org_id, contact_id);

-- chatnet_account.assignment_updated: the users listed on each chat-network account.
CREATE TABLE account_users (
  org_id uuid NOT NULL,
  chatnet_account_id uuid NOT NULL,
  user_ids uuid[] NOT NULL DEFAULT '{}',
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, chatnet_account_id)
);
