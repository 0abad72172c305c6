-- Who did what in an organization, newest first. Rows come from identity's own changes (written in their
-- transaction) and from other services' `audit.recorded` events (the event id is the row id, so a redelivered
-- event cannot add a second row). Kept for AUDIT_RETENTION_DAYS, then swept.
CREATE TABLE audit_log (
  id            uuid PRIMARY KEY,
  org_id        uuid NOT NULL,
  actor_id      uuid,
  actor_type    text NOT NULL CHECK (actor_type IN ('user', 'api_key', 'system')),
  action        text NOT NULL,
  resource_type text NOT NULL,
  resource_id   text,
  details       jsonb NOT NULL DEFAULT '{}',
  ip            text,
  request_id    text,
  created_at    timestamptz NOT NULL DEFAULT now()
);
-- The list is always one org's newest entries; the id breaks ties between entries of the same instant.
CREATE INDEX audit_log_org_created_idx ON audit_log (org_id, created_at DESC, id DESC);
-- The retention sweep deletes by age across all organizations.
CREATE INDEX audit_log_created_idx ON audit_log (created_at);
