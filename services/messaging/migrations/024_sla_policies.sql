-- SLA policies (issue #29 item 2): the promise an account's conversations keep (first reply, next reply,
-- resolution, in minutes, of business hours or of the clock) and what a breach does. An account follows at most one.
CREATE TABLE sla_policies (
  id                     uuid PRIMARY KEY,
  org_id                 uuid NOT NULL,
  name                   text NOT NULL,
  first_response_minutes int NOT NULL,
  next_response_minutes  int,
  resolution_minutes     int,
  business_hours_only    boolean NOT NULL DEFAULT false,
  -- Who hears of a breach: any of 'assignee', 'team_leads'.
  notify                 text[] NOT NULL DEFAULT '{}',
  reassign               boolean NOT NULL DEFAULT false,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sla_policies_org ON sla_policies (org_id, created_at, id);

-- Deleting a policy detaches it from its accounts.
CREATE TABLE account_sla (
  org_id             uuid NOT NULL,
  chatnet_account_id uuid NOT NULL,
  policy_id          uuid NOT NULL REFERENCES sla_policies (id) ON DELETE CASCADE,
  updated_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, chatnet_account_id)
);
CREATE INDEX account_sla_policy ON account_sla (policy_id);
