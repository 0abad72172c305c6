-- Chat-network accounts of each organization. Secrets (session data, proxy URL) are stored only
-- encrypted (AES-256-GCM, org and account id as additional authenticated data).
CREATE TABLE chatnet_accounts (
  id                 uuid PRIMARY KEY,
  org_id             uuid NOT NULL,
  display_name       text NOT NULL,
  chatnet_uid        text,
  avatar_url         text NOT NULL DEFAULT '',
  phone              text NOT NULL DEFAULT '',
  status             text NOT NULL DEFAULT 'qr_pending' CHECK (status IN ('qr_pending', 'connected', 'disconnected')),
  owner_user_id      uuid,
  proxy_enc          text,
  session_enc        text,
  -- The pool keeps the account live (reconnecting from session data, taking it over from a dead
  -- instance) while this is true: set by a successful login, cleared by an expired session or delete.
  keep_alive         boolean NOT NULL DEFAULT false,
  disconnect_reason  text,
  last_connected_at  timestamptz,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  deleted_at         timestamptz
);

CREATE INDEX chatnet_accounts_org ON chatnet_accounts (org_id, created_at, id) WHERE deleted_at IS NULL;
-- One account per network identity inside an org; purge clears chatnet_uid so it can connect afresh.
CREATE UNIQUE INDEX chatnet_accounts_uid ON chatnet_accounts (org_id, chatnet_uid) WHERE deleted_at IS NULL AND chatnet_uid IS NOT NULL;
-- The pool's scan for accounts that should be live.
CREATE INDEX chatnet_accounts_keep_alive ON chatnet_accounts (id) WHERE keep_alive AND deleted_at IS NULL;
