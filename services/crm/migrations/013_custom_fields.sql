-- Custom contact fields (issue #15): the organization defines typed fields, contacts carry their values.

CREATE TABLE contact_fields (
  id          uuid PRIMARY KEY,
  org_id      uuid NOT NULL,
  -- The name in contacts' customFields, CSV headers and cf.<key> filters; fixed once created.
  key         text NOT NULL CHECK (key ~ '^[a-z][a-z0-9_]{0,39}$'),
  label       text NOT NULL,
  -- Fixed once created too: stored values were checked against it.
  type        text NOT NULL CHECK (type IN ('text', 'number', 'date', 'boolean', 'select')),
  -- The allowed values of a select field (empty for the other types).
  options     text[] NOT NULL DEFAULT '{}',
  position    integer NOT NULL DEFAULT 0,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX contact_fields_key_uq ON contact_fields (org_id, key);

-- {key: value} with values typed as JSON (number, boolean, or string for text, date (YYYY-MM-DD) and select).
-- A constant default: PostgreSQL 11+ adds the column without rewriting the table.
ALTER TABLE contacts ADD COLUMN custom_fields jsonb NOT NULL DEFAULT '{}';

-- cf.<key>=value filters are containment tests (custom_fields @> '{"key": value}'), exact and typed;
-- jsonb_path_ops keeps the index small, and org_id in the same GIN index (btree_gin) keeps other organizations'
-- contacts out of the bitmap.
CREATE INDEX contacts_custom_fields_idx ON contacts USING gin (org_id, custom_fields jsonb_path_ops);

-- CSV import matches a row to a contact by phone (contacts_phone_uq), then by email: emails are stored in
-- lower case, so equality on the column is the match.
CREATE INDEX contacts_email_idx ON contacts (org_id, email) WHERE email <> '';
