-- Who works each chat-network account's conversations, and how new ones are handed out: `manual` (nobody is
-- assigned automatically) or `round_robin` over user_ids, skipping inactive users and those at max_open_per_user.
-- next_index is the rotation cursor, advanced under the row lock so several messaging instances share one fair turn.
-- user_ids also defines which agents see the account's unassigned conversations under "assigned" inbox visibility.
CREATE TABLE account_assignments (
  org_id uuid NOT NULL,
  chatnet_account_id uuid NOT NULL,
  mode text NOT NULL DEFAULT 'manual' CHECK (mode IN ('manual', 'round_robin')),
  user_ids uuid[] NOT NULL DEFAULT '{}',
  max_open_per_user integer CHECK (max_open_per_user IS NULL OR max_open_per_user > 0),
  next_index integer NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, chatnet_account_id)
);
-- "Which accounts list this user": the visibility rule asks it on every agent's inbox query.
CREATE INDEX account_assignments_users_idx ON account_assignments USING gin (user_ids);
