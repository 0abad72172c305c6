-- The gateway's grant per org (issue #27 item 3): the origin automation sends with the calls it makes on its own (rule
-- runs, campaigns, reminders, email alerts), so its callees know the gateway, not automation, vouched for the org.
-- One row per org, replaced by a later grant (the gateway renews it about once a day while the org is in use).
CREATE TABLE IF NOT EXISTS org_grants (
  org_id      uuid PRIMARY KEY,
  grant_token text NOT NULL,
  expires_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);
