-- The backlog a user with capacity takes from: an account's unassigned open conversations, oldest first.
CREATE INDEX conversations_backlog_idx ON conversations (org_id, chatnet_account_id, created_at, id)
  WHERE assignee_id IS NULL AND status IN ('active', 'pending');
-- Releasing a user's open conversations (deactivated, gone offline) reads them by assignee and account.
CREATE INDEX conversations_assignee_open_idx ON conversations (org_id, assignee_id, chatnet_account_id)
  WHERE assignee_id IS NOT NULL AND status NOT IN ('closed', 'archived');
