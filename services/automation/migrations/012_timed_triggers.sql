-- Timed triggers (issue #32 item 2): a schedule trigger's {cron, timezone, listId?} and a conversation_idle trigger's
-- {minutes, status?}, kept with the rule.
ALTER TABLE rules ADD COLUMN IF NOT EXISTS trigger_config jsonb NOT NULL DEFAULT '{}';

-- One row per active schedule rule: the next time it fires (the timer facility sleeps until the nearest next_at).
CREATE TABLE IF NOT EXISTS rule_schedules (
  rule_id     uuid PRIMARY KEY REFERENCES rules (id) ON DELETE CASCADE,
  org_id      uuid NOT NULL,
  cron        text NOT NULL,
  timezone    text NOT NULL,
  list_id     uuid,
  next_at     timestamptz NOT NULL,
  lease_until timestamptz
);
CREATE INDEX IF NOT EXISTS rule_schedules_next_idx ON rule_schedules (next_at);

-- One row per firing (rule, scheduled time) until its runs are all written: without a list one run, with a list one
-- run per member, a page of members per transaction (`after`: the last member written). Few rows at any time: a firing
-- goes once its runs are written.
CREATE TABLE IF NOT EXISTS schedule_firings (
  rule_id     uuid NOT NULL REFERENCES rules (id) ON DELETE CASCADE,
  fire_at     timestamptz NOT NULL,
  org_id      uuid NOT NULL,
  list_id     uuid,
  timezone    text NOT NULL,
  after       text NOT NULL DEFAULT '',
  lease_until timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (rule_id, fire_at)
);

-- One row per (active conversation_idle rule, conversation) while an idle period runs: armed or re-armed by each
-- message.received / message.sent, due at last_message_at + the rule's minutes, deleted when it fires.
CREATE TABLE IF NOT EXISTS idle_timers (
  rule_id         uuid NOT NULL REFERENCES rules (id) ON DELETE CASCADE,
  conversation_id uuid NOT NULL,
  org_id          uuid NOT NULL,
  contact_id      uuid,
  last_message_at timestamptz NOT NULL,
  due_at          timestamptz NOT NULL,
  lease_until     timestamptz,
  PRIMARY KEY (rule_id, conversation_id)
);
CREATE INDEX IF NOT EXISTS idle_timers_due_idx ON idle_timers (due_at);
CREATE INDEX IF NOT EXISTS idle_timers_lease_idx ON idle_timers (lease_until) WHERE lease_until IS NOT NULL;

-- Every write that can bring a firing earlier wakes the timers of every instance at commit, whatever code path (or
-- an operator's UPDATE) made it.
CREATE OR REPLACE FUNCTION automation_trigger_timers_changed() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('automation_trigger_timers', '');
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;

DROP TRIGGER IF EXISTS rule_schedules_changed ON rule_schedules;
CREATE TRIGGER rule_schedules_changed AFTER INSERT OR UPDATE OF next_at ON rule_schedules
  FOR EACH STATEMENT EXECUTE FUNCTION automation_trigger_timers_changed();
DROP TRIGGER IF EXISTS schedule_firings_changed ON schedule_firings;
CREATE TRIGGER schedule_firings_changed AFTER INSERT ON schedule_firings
  FOR EACH STATEMENT EXECUTE FUNCTION automation_trigger_timers_changed();
