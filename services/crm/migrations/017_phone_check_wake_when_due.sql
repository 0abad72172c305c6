-- The phone check's wake-up (012) fired for every statement that inserted contacts, phone or not: a contact created
-- with only a name or an email sent a NOTIFY, woke every instance's phone-check loop and cost it a claim that found
-- nothing, on each create. Inserts now notify only when a row they added is due (a phone, no chat-network identity;
-- 012's claim decides the rest). A change of number still notifies as before: transition tables cannot be combined
-- with UPDATE OF's column list, and such updates are rare.
CREATE FUNCTION crm_contacts_phone_check_wake_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM new_rows WHERE phone <> '' AND chatnet_uid IS NULL) THEN
    PERFORM pg_notify('crm_chatnet_phone_check', '');
  END IF;
  RETURN NULL;
END $$;

DROP TRIGGER contacts_phone_check_wake ON contacts;
CREATE TRIGGER contacts_phone_check_wake_inserted AFTER INSERT ON contacts
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION crm_contacts_phone_check_wake_inserted();
CREATE TRIGGER contacts_phone_check_wake_phone_changed AFTER UPDATE OF phone ON contacts
  FOR EACH STATEMENT EXECUTE FUNCTION crm_contacts_phone_check_wake();
