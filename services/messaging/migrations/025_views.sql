-- Saved views (issue #29 item 8): a named set of a list's query parameters (GET /conversations or GET /contacts),
-- applied with ?viewId=. A shared view is the whole org's (team leads and above write it); a personal one is its
-- owner's alone, and unknown to everyone else.
CREATE TABLE views (
  id          uuid PRIMARY KEY,
  org_id      uuid NOT NULL,
  name        text NOT NULL,
  -- Which list it filters: 'conversations' or 'contacts'.
  resource    text NOT NULL,
  shared      boolean NOT NULL,
  -- Who made it (a user of identity); a personal view belongs to them. NULL: a shared view made with an API key.
  owner_id    uuid,
  -- {param: value}, the list's query parameters as text, validated by the gateway against the list's own schema.
  filters     jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- GET /views: the org's shared views and the caller's own, of one resource, by name.
CREATE INDEX views_org_idx ON views (org_id, resource, lower(name), id);
CREATE INDEX views_owner_idx ON views (org_id, owner_id) WHERE NOT shared;
