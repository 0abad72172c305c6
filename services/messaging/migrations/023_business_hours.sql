-- Business hours (issue #29): the org's opening hours, and an account's own where it overrides them
-- (chatnet_account_id NULL is the org's). No row: open all the time.
CREATE TABLE business_hours (
  org_id             uuid NOT NULL,
  chatnet_account_id uuid,
  timezone           text NOT NULL,
  -- [{day: 0-6, open: "HH:MM", close: "HH:MM"}], checked and ordered by the service.
  days               jsonb NOT NULL,
  -- ["YYYY-MM-DD"], sorted.
  holidays           jsonb NOT NULL DEFAULT '[]',
  updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX business_hours_org ON business_hours (org_id) WHERE chatnet_account_id IS NULL;
CREATE UNIQUE INDEX business_hours_account ON business_hours (org_id, chatnet_account_id) WHERE chatnet_account_id IS NOT NULL;
