-- Contact merges (crm, issue #15): on contact.merged the source contact's conversations (and, in groups, the
-- messages it sent) are relinked to the target; the ids moved are recorded here so contact.merge_undone moves back
-- exactly those, and rows linked to the target since stay with it.
CREATE TABLE contact_merge_moves (
  merge_id   uuid NOT NULL,
  org_id     uuid NOT NULL,
  -- conversation: conversations.id; message: messages.id (sender_contact_id of a group message).
  kind       text NOT NULL CHECK (kind IN ('conversation', 'message')),
  row_id     uuid NOT NULL,
  PRIMARY KEY (merge_id, kind, row_id)
);
