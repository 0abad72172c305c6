-- Friend requests an account sent to network users (issue #26): a user who takes messages only from friends is
-- reached once they accept. One row per account and user; sending again to the same user refreshes it.
CREATE TABLE friend_requests (
  id           uuid PRIMARY KEY,
  org_id       uuid NOT NULL,
  account_id   uuid NOT NULL REFERENCES chatnet_accounts (id) ON DELETE CASCADE,
  chatnet_uid  text NOT NULL,
  message      text NOT NULL DEFAULT '',
  status       text NOT NULL DEFAULT 'sent' CHECK (status IN ('sent', 'accepted')),
  created_at   timestamptz NOT NULL DEFAULT now(),
  accepted_at  timestamptz,
  UNIQUE (org_id, account_id, chatnet_uid)
);

CREATE INDEX friend_requests_list ON friend_requests (org_id, account_id, status, created_at DESC, id);
