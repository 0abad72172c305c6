-- Private notes inside a conversation: written by users of the organization for each other, never sent to the
-- chat network. `mentions` holds the resolved user ids (users of the same org only), in order of first mention.
-- A note goes with its conversation.
CREATE TABLE conversation_notes (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  conversation_id uuid NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  author_id uuid NOT NULL,
  content text NOT NULL,
  mentions uuid[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- The notes list and the detail's timeline both read one conversation's notes newest first, within a time range.
CREATE INDEX conversation_notes_conversation_idx ON conversation_notes (conversation_id, created_at DESC, id DESC);
