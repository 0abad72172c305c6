-- The gateway's grant per org (issue #27 item 3): the origin the connector sends when it stores a received file in
-- messaging (its own session's work, before any event exists), so messaging knows the gateway, not the connector,
-- vouched for the org. One row per org, replaced by a later grant (renewed about once a day while the org is in use).
CREATE TABLE IF NOT EXISTS org_grants (
  org_id      uuid PRIMARY KEY,
  grant_token text NOT NULL,
  expires_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);
