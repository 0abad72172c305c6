-- A broadcast's own chat-network account (issue #26): recipients without a conversation get one started from it.
-- NULL: the account the contact last used, else the org's most recently connected account.
ALTER TABLE campaigns ADD COLUMN chatnet_account_id uuid;
