-- Search in messages and in the inbox list, folded for Vietnamese: case and accents do not matter ("bao gia"
-- finds "Báo giá"). unaccent() is only STABLE (its dictionary could change), so it cannot feed a generated
-- column; naming the dictionary makes the wrapper safe to declare IMMUTABLE (crm's crm_fold does the same).
-- NFC first, so text written with combining marks folds like precomposed text; đ/Đ are translated explicitly
-- because they are letters of their own, not a d with a mark, and not every unaccent.rules lists them.
CREATE EXTENSION IF NOT EXISTS unaccent;
CREATE OR REPLACE FUNCTION msg_fold(text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  AS $$ SELECT lower(translate(public.unaccent('public.unaccent'::regdictionary, normalize($1, NFC)), 'đĐ', 'dD')) $$;

-- Stored rather than an expression index: the trigram index's recheck and the ranking read the folded text
-- for every candidate, and folding it again each time costs more than keeping it. Adding it rewrites the table once.
ALTER TABLE messages ADD COLUMN search_text text GENERATED ALWAYS AS (msg_fold(content)) STORED;
-- Substring search: trigrams over the folded text. org_id is deliberately not in this index: in a large
-- organization its posting list (every message of the org) costs more to intersect than the heap filter.
CREATE INDEX messages_search_trgm_idx ON messages USING gin (search_text gin_trgm_ops);
-- A term found in many messages is answered from the newest ones (see the README): walking this index newest
-- first and filtering stops early, where the trigram bitmap would collect every match.
CREATE INDEX messages_org_sent_idx ON messages (org_id, sent_at DESC, id DESC);
-- The planner chooses between the two by the share of messages a pattern matches, estimated from this
-- column's histogram: a finer one (1,000 buckets) tells a 0.1% term from a 5% one.
ALTER TABLE messages ALTER COLUMN search_text SET STATISTICS 1000;

-- The inbox list searches the contact's name and phone (both copied from crm) the same way.
ALTER TABLE conversations ADD COLUMN search_text text GENERATED ALWAYS AS (msg_fold(contact_name || ' ' || contact_phone)) STORED;
CREATE INDEX conversations_search_trgm_idx ON conversations USING gin (search_text gin_trgm_ops);
DROP INDEX conversations_name_trgm_idx;
