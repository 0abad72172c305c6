-- Named API keys with scopes, optionally bound to a user (issue #31 item 3), beside the organization's own key.
--   name          null for the organization's key (settings/api-key: every scope, no user); set for a named key
--   scopes        the named key's scopes (@crm/auth API_KEY_SCOPES); null for the organization's key
--   user_id       the user the key acts as (their role and visibility apply); null: the whole org, as an agent
--   created_by    who created it (an agent may see and revoke only the keys bound to themselves)
--   expires_at    refused from then on; null: never
--   last_used_at  written at most once a minute per key (the gateway reports uses, identity updates conditionally)
ALTER TABLE api_keys
  ADD COLUMN name text,
  ADD COLUMN scopes text[],
  ADD COLUMN user_id uuid REFERENCES users(id),
  ADD COLUMN created_by uuid REFERENCES users(id),
  ADD COLUMN expires_at timestamptz,
  ADD COLUMN last_used_at timestamptz,
  ADD CONSTRAINT api_keys_named_have_scopes CHECK ((name IS NULL) = (scopes IS NULL));

-- The one-live-key rule is the organization key's alone; an org holds any number of named keys.
DROP INDEX api_keys_one_live_per_org;
CREATE UNIQUE INDEX api_keys_one_live_org_key ON api_keys (org_id) WHERE revoked_at IS NULL AND name IS NULL;
CREATE INDEX api_keys_named_by_org ON api_keys (org_id, created_at DESC, id) WHERE name IS NOT NULL AND revoked_at IS NULL;
-- A user's live keys: their cache entries are dropped when the user's access changes.
CREATE INDEX api_keys_by_user ON api_keys (user_id) WHERE user_id IS NOT NULL AND revoked_at IS NULL;

-- PUT /api/v1/settings/api {agentKeys}: whether agents may create keys bound to themselves.
ALTER TABLE organizations ADD COLUMN agent_api_keys boolean NOT NULL DEFAULT false;
