-- The public API's incremental sync (issue #15): conversations changed since a time, page by page in (updated_at, id)
-- order. A conversation changes on many paths (every message moves its counters and last message; status, assignee,
-- read marks, the contact copy), so a trigger keeps updated_at rather than each UPDATE: no path can forget it.
-- Existing rows take the migration's time (a constant default rewrites nothing): they all count as changed now.
ALTER TABLE conversations ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();

-- Only an UPDATE that changes something moves the time (a no-op write, such as marking a read conversation read,
-- is not a change to sync). Compared as jsonb without the generated search_text: a BEFORE trigger cannot see
-- generated columns (NEW holds them unset), and a whole-row WHEN clause is refused on a table that has them.
CREATE FUNCTION conversations_touch_updated_at() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF to_jsonb(NEW) - 'search_text' - 'updated_at' IS DISTINCT FROM to_jsonb(OLD) - 'search_text' - 'updated_at' THEN
    NEW.updated_at := now();
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER conversations_touch_updated_at BEFORE UPDATE ON conversations
  FOR EACH ROW EXECUTE FUNCTION conversations_touch_updated_at();

CREATE INDEX conversations_updated_idx ON conversations (org_id, updated_at, id);
