-- Team inbox: who owns a conversation (a user and/or a team of identity; ids only, checked by identity when
-- set) and two more states: pending (waiting on the customer) and snoozed (hidden until snoozed_until).
-- Nullable columns without defaults, so adding them rewrites nothing.
ALTER TABLE conversations ADD COLUMN assignee_id uuid;
ALTER TABLE conversations ADD COLUMN team_id uuid;
ALTER TABLE conversations ADD COLUMN snoozed_until timestamptz;

ALTER TABLE conversations DROP CONSTRAINT conversations_status_check;
ALTER TABLE conversations ADD CONSTRAINT conversations_status_check
  CHECK (status IN ('active', 'pending', 'snoozed', 'closed', 'archived'));
-- A snoozed conversation always knows when it wakes, and only a snoozed one has a wake-up time.
ALTER TABLE conversations ADD CONSTRAINT conversations_snooze_check
  CHECK ((status = 'snoozed') = (snoozed_until IS NOT NULL));

-- "Mine" and "unassigned" lists and counts; the team filter.
CREATE INDEX conversations_assignee_idx ON conversations (org_id, assignee_id);
CREATE INDEX conversations_team_idx ON conversations (org_id, team_id) WHERE team_id IS NOT NULL;
-- The wake-up job reads only the snoozed ones that are due.
CREATE INDEX conversations_snoozed_idx ON conversations (snoozed_until) WHERE status = 'snoozed';
