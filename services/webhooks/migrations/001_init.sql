-- Webhook endpoints of an organization. The secret is stored encrypted (SecretBox, AAD = org + row id).
CREATE TABLE webhook_settings (
  id              uuid PRIMARY KEY,
  org_id          uuid NOT NULL,
  url             text NOT NULL,
  events          text[] NOT NULL,
  secret_enc      text NOT NULL,
  active          boolean NOT NULL DEFAULT true,
  -- Start of the current run of failed attempts (NULL after any success); drives auto-disable.
  failing_since   timestamptz,
  disabled_at     timestamptz,
  disabled_reason text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_settings_org_idx ON webhook_settings (org_id, created_at);

-- The durable delivery queue: one row per (endpoint, event). A row is `pending` until an attempt
-- succeeds (`succeeded`) or the retry schedule is exhausted or the endpoint disabled (`failed`).
-- Workers claim due rows with FOR UPDATE SKIP LOCKED and push next_attempt_at forward by a lease, so a
-- crashed worker's rows become due again: delivery is at-least-once.
CREATE TABLE webhook_deliveries (
  id              uuid PRIMARY KEY,
  org_id          uuid NOT NULL,
  webhook_id      uuid NOT NULL REFERENCES webhook_settings (id) ON DELETE CASCADE,
  -- The event's id, sent as `webhook-id` (the same on every attempt, so receivers can de-duplicate).
  event_id        text NOT NULL,
  event_type      text NOT NULL,
  -- The exact body sent, so every attempt signs the same bytes.
  payload         text NOT NULL,
  status          text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts        integer NOT NULL DEFAULT 0,
  -- Automatic retries already scheduled (index into the retry schedule).
  retries         integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  -- Manual redelivery: the next attempt is labelled manual; one_shot = no automatic retries after it.
  manual          boolean NOT NULL DEFAULT false,
  one_shot        boolean NOT NULL DEFAULT false,
  last_status_code integer,
  last_error      text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  delivered_at    timestamptz,
  -- Fan-out is idempotent: a redelivered event creates no second delivery to the same endpoint.
  UNIQUE (webhook_id, event_id)
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_log_idx ON webhook_deliveries (webhook_id, created_at DESC);
CREATE INDEX webhook_deliveries_prune_idx ON webhook_deliveries (updated_at) WHERE status <> 'pending';

-- Every attempt, as the attempt log shows it.
CREATE TABLE webhook_attempts (
  id              uuid PRIMARY KEY,
  org_id          uuid NOT NULL,
  delivery_id     uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempt         integer NOT NULL,
  trigger         text NOT NULL CHECK (trigger IN ('auto', 'manual', 'test')),
  started_at      timestamptz NOT NULL,
  duration_ms     integer NOT NULL,
  status_code     integer,
  ok              boolean NOT NULL,
  error           text,
  response_body   text NOT NULL DEFAULT '',
  response_truncated boolean NOT NULL DEFAULT false
);
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, attempt);
