-- The gateway's grant per org (issue #27 item 3): the origin messaging sends with the calls it makes on its own
-- (scheduled messages, auto-replies, the assignment repair, read receipts), so its callees know the gateway, not
-- messaging, vouched for the org. One row per org, replaced by a later grant (renewed about once a day while in use).
CREATE TABLE IF NOT EXISTS org_grants (
  org_id      uuid PRIMARY KEY,
  grant_token text NOT NULL,
  expires_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);
