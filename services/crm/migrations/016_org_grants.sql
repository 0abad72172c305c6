-- The gateway's grant per org (issue #27 item 3): the origin crm sends with the calls it makes on its own (its report
-- worker's user names, its phone-check worker's look-ups), so its callees know the gateway, not crm, vouched for the
-- org. One row per org, replaced by a later grant (renewed about once a day while the org is in use).
CREATE TABLE IF NOT EXISTS org_grants (
  org_id      uuid PRIMARY KEY,
  grant_token text NOT NULL,
  expires_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);
