-- hasChatnet is always a boolean (issue #15): true when the contact has a chat-network identity (chatnet_uid)
-- or a lookup of its phone on the network found one; false otherwise, manual contacts included.
-- chatnet_checked_at records that the phone was looked up: `hasChatnet=unknown` lists contacts with a phone that
-- never was (a subset of false). A changed phone has not been checked (trigger below).
ALTER TABLE contacts ADD COLUMN chatnet_checked_at timestamptz;
-- The lookup's answer for the current phone; meaningful only with chatnet_checked_at set.
ALTER TABLE contacts ADD COLUMN chatnet_phone_found boolean NOT NULL DEFAULT false;

DROP INDEX contacts_has_chatnet_idx;
ALTER TABLE contacts DROP COLUMN has_chatnet;
ALTER TABLE contacts ADD COLUMN has_chatnet boolean NOT NULL
  GENERATED ALWAYS AS (chatnet_uid IS NOT NULL OR chatnet_phone_found) STORED;
CREATE INDEX contacts_has_chatnet_idx ON contacts (org_id, has_chatnet);
CREATE INDEX contacts_chatnet_unchecked_idx ON contacts (org_id)
  WHERE chatnet_uid IS NULL AND phone <> '' AND chatnet_checked_at IS NULL;

-- An answer about the old number says nothing about the new one.
CREATE FUNCTION crm_contacts_phone_unchecked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.phone IS DISTINCT FROM OLD.phone THEN
    NEW.chatnet_checked_at := NULL;
    NEW.chatnet_phone_found := false;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER contacts_phone_unchecked BEFORE UPDATE OF phone ON contacts
  FOR EACH ROW EXECUTE FUNCTION crm_contacts_phone_unchecked();
