-- A conversation's SLA clock (issue #29 item 2). Kept by messaging's own consumer of message.received, message.sent
-- and conversation.status_changed (off the inbound path), and by the breach timer. All nullable without defaults
-- (or with a constant one): adding them rewrites nothing.
ALTER TABLE conversations
  -- The policy of its account when the clock was last set; NULL: no SLA (the API's `sla` is null).
  ADD COLUMN sla_policy_id uuid,
  -- The current cycle began (the first inbound message, or a reopening); NULL: no cycle running (closed, or never opened).
  ADD COLUMN sla_opened_at timestamptz,
  -- The contact's first message not answered yet; NULL: we answered last.
  ADD COLUMN sla_waiting_since timestamptz,
  -- We answered in this cycle: the next wait is a next-response window, not the first response.
  ADD COLUMN sla_replied boolean NOT NULL DEFAULT false,
  -- Pending due times; each is NULL once met (or when the policy has no such window).
  ADD COLUMN sla_first_response_due_at timestamptz,
  ADD COLUMN sla_next_response_due_at timestamptz,
  ADD COLUMN sla_resolution_due_at timestamptz,
  -- The nearest pending, not yet breached due time: the breach timer's due row.
  ADD COLUMN sla_due_at timestamptz,
  -- When the last 20% of the nearest pending window begins (the API's status due_soon from then).
  ADD COLUMN sla_warn_at timestamptz,
  -- The latest breach of this cycle (status breached); a new cycle clears it.
  ADD COLUMN sla_breached_at timestamptz,
  -- The windows already breached (first_response, next_response, resolution): the timer raises each once.
  ADD COLUMN sla_breached text[] NOT NULL DEFAULT '{}';

-- The breach timer: the nearest due row, and the due rows in due order.
CREATE INDEX conversations_sla_due_idx ON conversations (sla_due_at) WHERE sla_due_at IS NOT NULL;

-- How each window ended, for SLA reports (GET /analytics/sla: attainment per policy): met (answered or closed in
-- time) or breached (the timer), one per conversation, window and due time; a window stopped by closing is neither.
CREATE TABLE sla_outcomes (
  org_id          uuid NOT NULL,
  conversation_id uuid NOT NULL,
  policy_id       uuid NOT NULL,
  target          text NOT NULL,
  due_at          timestamptz NOT NULL,
  outcome         text NOT NULL CHECK (outcome IN ('met', 'breached')),
  at              timestamptz NOT NULL,
  PRIMARY KEY (conversation_id, target, due_at)
);
CREATE INDEX sla_outcomes_org ON sla_outcomes (org_id, at);
