-- Search terms with words of one or two characters (issue #12). pg_trgm takes no trigram from such a word, so
-- "Lê An" could only be looked for by reading message after message (every message of the org when nothing
-- matched: 0.5-1.6 s at a million). Short words are matched as whole words instead (the last word of a term as
-- the start of a word), through a word index: the folded text split into words, as a `simple` tsvector (no
-- stemming, no stop words: "a" and "ơ" are words like any other).
--
-- A word is a run of letters and digits: everything else becomes a space first, so PostgreSQL's parser does
-- not keep "shop.vn", "a@b.vn" or "1.5" as one token (its host, email and number rules) and every short word
-- in them is found. The argument is the folded text (search_text): the index needs no folding of its own.
CREATE OR REPLACE FUNCTION msg_words(text) RETURNS tsvector
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  AS $$ SELECT to_tsvector('pg_catalog.simple'::regconfig, regexp_replace($1, '[^[:alnum:]]+', ' ', 'g')) $$;

-- Expression indexes, not stored columns: a stored tsvector added 125 MB to the 260 MB of a million messages and
-- rewrote the table under an exclusive lock (2-3 minutes, every other index rebuilt); the index is 18 MB and is
-- built while the table stays readable. GIN holds no positions, so a query that needs no positions (the words
-- ANDed) is answered exactly and the expression is never computed again for the rows it returns; word order and
-- adjacency are checked on search_text by a regular expression (src/domain/search-text.ts shortWordRule).
CREATE INDEX messages_search_words_idx ON messages USING gin (msg_words(search_text));
CREATE INDEX conversations_search_words_idx ON conversations USING gin (msg_words(search_text));
