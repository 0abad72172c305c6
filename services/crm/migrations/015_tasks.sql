-- Tasks (follow-ups): optionally on a contact and/or a conversation (messaging's, so no foreign key), assigned to a
-- user (identity's). A deleted contact leaves its tasks standing, without the contact.
-- The due timer (tasks/due-timer.ts) raises task.due once per due time: `due_fired_at` says it was raised for the
-- current `due_at` (moving due_at clears it), `due_lease_until` is an instance's claim while it raises it.
CREATE TABLE tasks (
  id               uuid PRIMARY KEY,
  org_id           uuid NOT NULL,
  title            text NOT NULL,
  notes            text NOT NULL DEFAULT '',
  due_at           timestamptz,
  status           text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'done')),
  assignee_id      uuid,
  contact_id       uuid REFERENCES contacts (id) ON DELETE SET NULL,
  conversation_id  uuid,
  created_by       uuid,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  completed_at     timestamptz,
  due_fired_at     timestamptz,
  due_lease_until  timestamptz
);
-- The list: the org's tasks soonest due first, and its filters.
CREATE INDEX tasks_org_due_idx ON tasks (org_id, due_at, created_at, id);
CREATE INDEX tasks_assignee_idx ON tasks (org_id, assignee_id, due_at);
CREATE INDEX tasks_contact_idx ON tasks (org_id, contact_id) WHERE contact_id IS NOT NULL;
CREATE INDEX tasks_conversation_idx ON tasks (org_id, conversation_id) WHERE conversation_id IS NOT NULL;
-- The due timer: the nearest pending due time, and the earliest live lease.
CREATE INDEX tasks_due_pending_idx ON tasks (due_at) WHERE status = 'open' AND due_fired_at IS NULL AND due_at IS NOT NULL;
CREATE INDEX tasks_due_lease_idx ON tasks (due_lease_until) WHERE due_fired_at IS NULL AND due_lease_until IS NOT NULL;
