-- Quoted replies, recall and reactions (issue #26).
-- A reply names the message it quotes (of the same conversation). A recalled message keeps its content (team leads
-- and above still read it; agents see none when the contact recalled it), with when and by whom it was recalled;
-- its status becomes 'recalled'.
ALTER TABLE messages
  ADD COLUMN quote_message_id uuid,
  ADD COLUMN recalled_at timestamptz,
  ADD COLUMN recalled_by text CHECK (recalled_by IN ('agent', 'contact')),
  ADD CONSTRAINT messages_recalled_check CHECK ((recalled_at IS NULL) = (recalled_by IS NULL));

-- One reaction per person and message: an agent (a user id) or a member of the thread (their network uid).
CREATE TABLE message_reactions (
  org_id uuid NOT NULL,
  message_id uuid NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  by_kind text NOT NULL CHECK (by_kind IN ('agent', 'contact')),
  user_id text NOT NULL,
  emoji text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (message_id, by_kind, user_id)
);
