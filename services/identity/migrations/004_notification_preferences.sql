-- A user's own choice to receive email alerts about new inbound messages (automation sends them). Beside the user:
-- one value per user, read with the user by GetUser, gone with the user; no table of its own is needed for a flag.
ALTER TABLE users ADD COLUMN notify_by_email boolean NOT NULL DEFAULT false;
