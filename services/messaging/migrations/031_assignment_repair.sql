-- Assignment that repairs itself (issue #29 item 5). Per account: round robin skips users not online (only_online);
-- an inbound message the assignee leaves unanswered for reply_timeout_minutes reassigns, unassigns or tells the
-- team leads (on_timeout); a user who gets capacity back takes the oldest unassigned conversation (drain_backlog).
ALTER TABLE account_assignments ADD COLUMN only_online boolean NOT NULL DEFAULT false;
ALTER TABLE account_assignments ADD COLUMN reply_timeout_minutes integer CHECK (reply_timeout_minutes IS NULL OR reply_timeout_minutes > 0);
ALTER TABLE account_assignments ADD COLUMN on_timeout text CHECK (on_timeout IN ('reassign', 'unassign', 'notify_leads'));
ALTER TABLE account_assignments ADD COLUMN drain_backlog boolean NOT NULL DEFAULT false;
ALTER TABLE account_assignments ADD CONSTRAINT account_assignments_timeout_check
  CHECK ((reply_timeout_minutes IS NULL) = (on_timeout IS NULL));

-- Users' effective availability as identity announces it (user.availability_changed). changed_at is the event's
-- occurredAt: an older event arriving late never overwrites a newer one. A user with no row counts as online.
CREATE TABLE user_availability (
  org_id uuid NOT NULL,
  user_id uuid NOT NULL,
  status text NOT NULL CHECK (status IN ('online', 'away', 'offline')),
  changed_at timestamptz NOT NULL,
  PRIMARY KEY (org_id, user_id)
);

-- The reply timer of a conversation waiting on its assignee (one row per conversation): due at the first unanswered
-- inbound message's time plus the account's window. Claimed by the timer with FOR UPDATE SKIP LOCKED under a lease;
-- the firing re-checks the conversation (still theirs, still unanswered, still open), so a late cleanup is harmless.
CREATE TABLE reply_timeouts (
  conversation_id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  assignee_id uuid NOT NULL,
  inbound_at timestamptz NOT NULL,
  due_at timestamptz NOT NULL,
  lease_until timestamptz
);
CREATE INDEX reply_timeouts_due_idx ON reply_timeouts (due_at);
