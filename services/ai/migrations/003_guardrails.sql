-- Guarded AI (issue #32 items 5 and 6), beside assistant_settings: the providers to try, in order, when the chosen
-- one fails (the offline engine always answers last), and the auto-reply to customers. No row: no fallback provider,
-- auto-reply off.
CREATE TABLE guard_settings (
  org_id uuid PRIMARY KEY,
  fallback_providers text[] NOT NULL DEFAULT '{}',
  auto_reply_enabled boolean NOT NULL DEFAULT false,
  auto_reply_account_ids uuid[] NOT NULL DEFAULT '{}',
  -- The engine's confidence an answer needs to be sent; below it the conversation goes to a person.
  auto_reply_min_confidence real NOT NULL DEFAULT 0.7 CHECK (auto_reply_min_confidence BETWEEN 0 AND 1),
  auto_reply_outside_hours_only boolean NOT NULL DEFAULT false,
  auto_reply_max_replies integer NOT NULL DEFAULT 3 CHECK (auto_reply_max_replies BETWEEN 1 AND 20),
  updated_by uuid,
  updated_at timestamptz NOT NULL DEFAULT now()
);
