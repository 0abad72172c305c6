-- The phone check behind hasChatnet (issue #15): crm asks the connector whether a contact's phone number is on the
-- chat network and records the answer (chatnet_checked_at, chatnet_phone_found of 010). chatnet_check_after is both
-- the claim's lease (a worker holding a contact) and the retry time (no connected account yet, network not
-- answering): a contact is due when it is unchecked and this is NULL or past.
ALTER TABLE contacts ADD COLUMN chatnet_check_after timestamptz;

-- A new number is due at once, whatever the old one's check was doing.
CREATE OR REPLACE FUNCTION crm_contacts_phone_unchecked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.phone IS DISTINCT FROM OLD.phone THEN
    NEW.chatnet_checked_at := NULL;
    NEW.chatnet_phone_found := false;
    NEW.chatnet_check_after := NULL;
  END IF;
  RETURN NEW;
END $$;

-- Wakes the phone-check workers of every instance when contacts are added or their numbers change (once per
-- statement: a bulk import is one wake-up; the claim finds what is due).
CREATE FUNCTION crm_contacts_phone_check_wake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('crm_chatnet_phone_check', '');
  RETURN NULL;
END $$;
CREATE TRIGGER contacts_phone_check_wake AFTER INSERT OR UPDATE OF phone ON contacts
  FOR EACH STATEMENT EXECUTE FUNCTION crm_contacts_phone_check_wake();
