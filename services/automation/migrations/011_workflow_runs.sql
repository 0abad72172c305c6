-- Workflows (issue #32): a rule's signing secret for http_request steps (encrypted with ENCRYPTION_KEY, the org and
-- rule as additional data; null for rules made before it: POST .../rotate-secret gives one).
ALTER TABLE rules ADD COLUMN IF NOT EXISTS secret_enc text;

-- Run history: the trigger that started the run, its conversation, and the steps it took (appended in the same
-- UPDATE that records progress, so the history costs no write of its own).
ALTER TABLE rule_runs ADD COLUMN IF NOT EXISTS trigger_type text NOT NULL DEFAULT '';
ALTER TABLE rule_runs ADD COLUMN IF NOT EXISTS conversation_id uuid;
ALTER TABLE rule_runs ADD COLUMN IF NOT EXISTS steps jsonb NOT NULL DEFAULT '[]';
UPDATE rule_runs r SET trigger_type = ru.trigger_type FROM rules ru WHERE ru.id = r.rule_id AND r.trigger_type = '';

-- GET /automation/runs/:id asks by id and org; the rule's list filters by status.
CREATE INDEX IF NOT EXISTS rule_runs_rule_status_idx ON rule_runs (rule_id, status, created_at DESC, id DESC);
-- The run-log sweeper sleeps until the oldest finished run falls out of the retention (the timer facility).
CREATE INDEX IF NOT EXISTS rule_runs_finished_idx ON rule_runs (finished_at) WHERE finished_at IS NOT NULL;
