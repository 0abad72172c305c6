-- Issue #15: a group thread is a conversation, not a contact. Its messages come from many people, so each inbound
-- message of a group links the contact of its sender (crm's contact for the sender's network uid); NULL for
-- one-to-one threads (the conversation's contact wrote it), outbound messages, and while crm could not be reached.
ALTER TABLE messages ADD COLUMN sender_contact_id uuid;

-- For contact.deleted (unlink the deleted contact's messages). Partial: only messages with
-- a sender contact (group messages) pay for it; the hot one-to-one inbound path writes no entry.
CREATE INDEX messages_sender_contact_idx ON messages (org_id, sender_contact_id) WHERE sender_contact_id IS NOT NULL;
