-- Customer lists: a named, saved filter over the organization's contacts. Members are never stored: they are
-- evaluated live from `criteria` (so the count and the members follow the contacts as they change).
CREATE TABLE customer_lists (
  id          uuid PRIMARY KEY,
  org_id      uuid NOT NULL,
  name        text NOT NULL,
  description text NOT NULL DEFAULT '',
  status      text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'active', 'paused')),
  -- {"filters": [{"field", "operator", "value"}]}, validated by the service before it is stored.
  criteria    jsonb NOT NULL DEFAULT '{"filters": []}',
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX customer_lists_org_idx ON customer_lists (org_id, created_at DESC, id DESC);
-- Keyset pagination of members in contact-id order.
CREATE INDEX contacts_org_id_idx ON contacts (org_id, id);
