-- The organization's inbox settings. agent_visibility: `all` (every agent sees every conversation) or `assigned`
-- (an agent sees the conversations assigned to them and the unassigned ones of accounts whose
-- account_assignments.user_ids list them). No row = the default, `all`.
CREATE TABLE inbox_settings (
  org_id uuid PRIMARY KEY,
  agent_visibility text NOT NULL DEFAULT 'all' CHECK (agent_visibility IN ('all', 'assigned')),
  updated_at timestamptz NOT NULL DEFAULT now()
);
