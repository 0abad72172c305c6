-- Macros (issue #29): a named, ordered list of actions (send a message, add a note, assign, set status or
-- priority, file in a folder, snooze) run on a conversation in one request. A shared macro is the whole org's
-- (team leads and above write it); a personal one is its owner's alone, and unknown to everyone else.
CREATE TABLE macros (
  id          uuid PRIMARY KEY,
  org_id      uuid NOT NULL,
  name        text NOT NULL,
  shared      boolean NOT NULL,
  -- Who made it (a user of identity); a personal macro belongs to them. NULL: a shared macro made without a user
  -- (an API key).
  owner_id    uuid,
  -- [{type, ...fields of the action}] as validated (@crm/validation messagingRules.macroAction).
  actions     jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- GET /macros: the org's shared macros and the caller's own, by name.
CREATE INDEX macros_org_idx ON macros (org_id, lower(name), id);
CREATE INDEX macros_owner_idx ON macros (org_id, owner_id) WHERE NOT shared;
