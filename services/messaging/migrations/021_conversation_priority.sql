-- Conversation priority (issue #29): none (NULL), low, medium, high or urgent, stored as its rank (1 low .. 4 urgent)
-- so the list's sortBy=priority is a plain descending order with the unprioritised last. Nullable without a
-- default: adding it rewrites nothing.
ALTER TABLE conversations ADD COLUMN priority smallint CHECK (priority BETWEEN 1 AND 4);

-- sortBy=priority (and the priority filter), newest message first within a priority, as the default list.
CREATE INDEX conversations_priority_idx ON conversations (org_id, priority DESC NULLS LAST, last_message_at DESC NULLS LAST, id DESC);
