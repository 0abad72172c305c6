-- Message templates: text with {{variable}} placeholders, used by send_message / send_notification (and campaigns later).
CREATE TABLE templates (
  id          uuid PRIMARY KEY,
  org_id      uuid NOT NULL,
  name        text NOT NULL,
  content     text NOT NULL,
  category    text NOT NULL DEFAULT '',
  variables   text[] NOT NULL DEFAULT '{}',
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX templates_org_idx ON templates (org_id, created_at DESC, id DESC);

-- Automation rules: one trigger (event type + conditions, keywords for keyword triggers) and ordered actions.
CREATE TABLE rules (
  id           uuid PRIMARY KEY,
  org_id       uuid NOT NULL,
  name         text NOT NULL,
  description  text NOT NULL DEFAULT '',
  type         text NOT NULL DEFAULT 'sequence',
  trigger_type text NOT NULL,
  conditions   jsonb NOT NULL DEFAULT '[]',
  keywords     text[] NOT NULL DEFAULT '{}',
  actions      jsonb NOT NULL DEFAULT '[]',
  status       text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'active', 'paused')),
  created_by   uuid,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX rules_org_idx ON rules (org_id, created_at DESC, id DESC);
-- The consumer's question for every event: which active rules of this org listen to this trigger?
CREATE INDEX rules_active_idx ON rules (org_id, trigger_type) WHERE status = 'active';

-- One run per (rule, event): the unique key is what makes a redelivered event start nothing twice.
-- It is also the durable work queue: a run waits (resume_at) or retries here, across restarts.
CREATE TABLE rule_runs (
  id           uuid PRIMARY KEY,
  org_id       uuid NOT NULL,
  rule_id      uuid NOT NULL REFERENCES rules (id) ON DELETE CASCADE,
  event_id     uuid NOT NULL,
  event_type   text NOT NULL,
  contact_id   uuid,
  -- The event data (and the contact when it was fetched to judge conditions): the template variables.
  context      jsonb NOT NULL,
  -- The actions as they were when the run started; editing the rule does not change a run under way.
  actions      jsonb NOT NULL,
  next_action  integer NOT NULL DEFAULT 0,
  status       text NOT NULL CHECK (status IN ('pending', 'running', 'waiting', 'completed', 'failed', 'cancelled')),
  attempts     integer NOT NULL DEFAULT 0,
  error        text NOT NULL DEFAULT '',
  resume_at    timestamptz,
  lease_until  timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  finished_at  timestamptz,
  UNIQUE (rule_id, event_id)
);
CREATE INDEX rule_runs_rule_idx ON rule_runs (rule_id, created_at DESC, id DESC);
CREATE INDEX rule_runs_due_idx ON rule_runs (resume_at) WHERE status IN ('pending', 'waiting');
CREATE INDEX rule_runs_lease_idx ON rule_runs (lease_until) WHERE status = 'running';

-- In-app notifications. user_id set: for that user only. user_id NULL: for the whole org, or, with
-- audience_role, for users holding at least that role (e.g. 'admin' for admins and owners).
CREATE TABLE notifications (
  id            uuid PRIMARY KEY,
  org_id        uuid NOT NULL,
  user_id       uuid,
  audience_role text CHECK (audience_role IN ('agent', 'team_lead', 'admin', 'owner')),
  type          text NOT NULL,
  title         text NOT NULL,
  message       text NOT NULL,
  resource_id   text NOT NULL DEFAULT '',
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX notifications_user_idx ON notifications (org_id, user_id, created_at DESC, id DESC) WHERE user_id IS NOT NULL;
CREATE INDEX notifications_org_idx ON notifications (org_id, created_at DESC, id DESC) WHERE user_id IS NULL;

-- Read state per reader: an org-wide notification is read by each user separately.
CREATE TABLE notification_reads (
  notification_id uuid NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
  user_id         uuid NOT NULL,
  read_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (notification_id, user_id)
);

-- The last lead score seen per contact, to notice when one crosses the high-value score. as_of is the
-- event's time: events can arrive out of order, and an older one must not undo a newer one.
CREATE TABLE lead_scores (
  org_id      uuid NOT NULL,
  contact_id  uuid NOT NULL,
  score       integer NOT NULL,
  high        boolean NOT NULL,
  as_of       timestamptz NOT NULL,
  PRIMARY KEY (org_id, contact_id)
);
