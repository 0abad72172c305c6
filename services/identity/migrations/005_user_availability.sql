-- A user's availability (issue #29 item 4), beside the user like notify_by_email: one value set per user, read with
-- the user (lists filter on it), gone with the user.
--   availability_chosen      what they set (PUT /profile/availability)
--   availability             what others treat them as: their choice while a socket of theirs is connected or was,
--                            less than AVAILABILITY_OFFLINE_AFTER_MS ago; offline otherwise (and before any socket)
--   socket_connected         whether the gateways count a live socket of theirs (the first connects / the last goes)
--   presence_seq             the gateways' order of those reports (a Redis counter): a late report never undoes a newer one
--   offline_due_at           the offline timer (ARCHITECTURE.md, Timers): set when the last socket goes, cleared on a connect
--   availability_updated_at  the last change of any of the above (null: never)
ALTER TABLE users
  ADD COLUMN availability_chosen text NOT NULL DEFAULT 'online' CHECK (availability_chosen IN ('online', 'away', 'offline')),
  ADD COLUMN availability text NOT NULL DEFAULT 'offline' CHECK (availability IN ('online', 'away', 'offline')),
  ADD COLUMN socket_connected boolean NOT NULL DEFAULT false,
  ADD COLUMN presence_seq bigint NOT NULL DEFAULT 0,
  ADD COLUMN offline_due_at timestamptz,
  ADD COLUMN availability_updated_at timestamptz;

-- The timer's claim and its next-due question read only the waiting rows.
CREATE INDEX users_offline_due_idx ON users (offline_due_at) WHERE offline_due_at IS NOT NULL;
