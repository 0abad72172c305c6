-- The inbox list's name/phone search moves off the conversation row (issue #28, new senders).
-- Every message updates its conversation (counters, last message), and that update is never HOT: last_message_at
-- and updated_at are indexed. So each one entered the row again in every index, the two GIN indexes of the
-- generated search_text included: the name folded again (unaccent), its trigrams and words computed again and
-- queued in the GIN pending lists, whose flush a later writer pays for all at once; and the updated_at trigger
-- compared the row as jsonb twice because a generated column kept it from comparing records. Measured on 8,000
-- conversations: ~140 µs per update before, ~60 after. The folded name lives in its own narrow row now, written
-- when a conversation is created and when its name or phone change, which is rare.
CREATE TABLE conversation_names (
  conversation_id uuid PRIMARY KEY REFERENCES conversations (id) ON DELETE CASCADE,
  org_id uuid NOT NULL,
  -- msg_fold(contact_name || ' ' || contact_phone): what the search's terms are matched against.
  search_text text NOT NULL
);

-- A trigger, like updated_at's: every path that creates a conversation or changes its contact copy keeps the
-- name searchable without knowing about this table.
CREATE FUNCTION conversation_names_sync() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO conversation_names (conversation_id, org_id, search_text)
      VALUES (NEW.id, NEW.org_id, msg_fold(NEW.contact_name || ' ' || NEW.contact_phone));
  ELSE
    UPDATE conversation_names SET search_text = msg_fold(NEW.contact_name || ' ' || NEW.contact_phone)
      WHERE conversation_id = NEW.id;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER conversation_names_on_insert AFTER INSERT ON conversations
  FOR EACH ROW EXECUTE FUNCTION conversation_names_sync();
-- The inbound batch names contact_name in its SET for every message (a group's name may change), so the WHEN
-- clause, not the column list, is what keeps an unchanged name from being written again.
CREATE TRIGGER conversation_names_on_update AFTER UPDATE OF contact_name, contact_phone ON conversations
  FOR EACH ROW WHEN (OLD.contact_name IS DISTINCT FROM NEW.contact_name OR OLD.contact_phone IS DISTINCT FROM NEW.contact_phone)
  EXECUTE FUNCTION conversation_names_sync();

-- The copy comes after the triggers: creating them locks out writers of conversations until this migration commits,
-- so no conversation created or renamed by a running instance meanwhile can be missed.
INSERT INTO conversation_names (conversation_id, org_id, search_text)
  SELECT id, org_id, search_text FROM conversations;

-- Same indexes as the column had (migrations 006, 010), built after the copy (a GIN index built at once has no
-- pending list to read). org_id stays out of them, as for messages: the heap filter costs less than intersecting an
-- org's posting list. Every name search reads the pending lists in full, and a table written this rarely would let
-- them grow to the default 4 MB before a writer or autovacuum (after ~20% new rows) merges them; at 256 kB they are
-- merged in small steps (6,000 new names into 50,000: 0.29 s with the merges, 0.25 s at 4 MB counting its one merge).
CREATE INDEX conversation_names_trgm_idx ON conversation_names USING gin (search_text gin_trgm_ops) WITH (gin_pending_list_limit = 256);
CREATE INDEX conversation_names_words_idx ON conversation_names USING gin (msg_words(search_text)) WITH (gin_pending_list_limit = 256);

-- Drops the column's two GIN indexes with it.
ALTER TABLE conversations DROP COLUMN search_text;

-- Without a generated column the trigger compares records: a change to any column but updated_at moves the time,
-- and otherwise updated_at is what the statement left it, as before (migration 012), for a fraction of the jsonb's
-- cost. Every column type of the row must have an equality operator for this (json and point have none: use jsonb,
-- or compare such a column apart).
CREATE OR REPLACE FUNCTION conversations_touch_updated_at() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
DECLARE
  stated timestamptz := NEW.updated_at;
BEGIN
  NEW.updated_at := OLD.updated_at;
  IF NEW IS DISTINCT FROM OLD THEN
    NEW.updated_at := now();
  ELSE
    NEW.updated_at := stated;
  END IF;
  RETURN NEW;
END
$$;
