-- Search terms with words of one or two characters (issue #12). pg_trgm takes no trigram from such a word, so
-- "Lê An" could only be looked for by reading message after message (every message of the org when nothing
-- matched: 0.5-1.6 s at a million). Short words are matched as whole words instead (the last word of a term as
-- the start of a word), through a word index of the folded text (search_text: the index needs no folding of its
-- own). See src/domain/search-text.ts shortWordRule for how a term is turned into a query of it.
--
-- A word is a run of letters and digits: the text is split at everything else, so "shop.vn", "a@b.vn" or "1.5"
-- are words each ("vn", "1", "5"), not one host, email or number token as PostgreSQL's text parser would keep
-- them. The vector holds:
--   - every word as far as a search asks the index for it: its first three characters. A search asks for a word
--     of one or two characters whole ('an') or, as a term's last word, as the start of a word ('an':* finds "anh"
--     and "and"); three characters are enough to tell "an" from a longer word, and fewer distinct keys keep the
--     index small (a million messages: 20 MB; every word whole, 22 MB; conversations' names and phones 0.8 MB
--     against 7.5 MB). Longer words of a term are trigram LIKEs, never looked for here.
--   - every word of one or two characters joined by "~" to the word after it (cut the same way): "gặp lê an nhé"
--     gives "le~an" and "an~nhe". A term of short words only must occur as typed, and "lê an" becomes
--     'le~an':*: one short posting list, where the two words were two long ones intersected ('an':* collects
--     108,000 of a million messages) and their order and adjacency a regular expression on every message
--     holding both ("hồ hà": 10,000 rows, 0.2-0.3 s; now 1 ms). "~" is not a letter or digit, so it never occurs
--     inside a word and a pair is never taken for a word. A pair starts with a short word: only terms made of
--     short words need adjacency (beside a longer word, words match anywhere: "hansen ol" finds "Ole Hansen").
-- array_to_tsvector takes the tokens as they are (no parser to split "le~an", no stemming nor stop words: "a"
-- and "ơ" are words like any other) and keeps no positions, which GIN does not store anyway.
--
-- PL/pgSQL because the pairs need a loop. It costs about what the former to_tsvector of the text did (most of it
-- is the split; 10-18 µs a message on a busy machine, a quarter more than before), and PostgreSQL computes it for
-- each row it reads when it walks the newest messages rather than use the index.
CREATE OR REPLACE FUNCTION msg_words(text) RETURNS tsvector
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT
  AS $$
DECLARE
  words text[] := regexp_split_to_array($1, '[^[:alnum:]]+');
  n int := cardinality(words);
  tokens text[] := '{}';
  w text;
BEGIN
  FOR i IN 1..n LOOP
    w := words[i];
    -- The split leaves an empty string at either end when the text starts or ends with a separator.
    CONTINUE WHEN w = '';
    tokens := tokens || left(w, 3);
    -- Characters, not bytes, as isShortWord counts them.
    IF length(w) <= 2 AND i < n AND words[i + 1] <> '' THEN
      tokens := tokens || (w || '~' || left(words[i + 1], 3));
    END IF;
  END LOOP;
  RETURN array_to_tsvector(tokens);
END
$$;

-- Expression indexes, not stored columns: a stored tsvector added 125 MB to the 260 MB of a million messages and
-- rewrote the table under an exclusive lock (2-3 minutes, every other index rebuilt); the index is 20 MB and is
-- built while the table stays readable (writes wait; 19 s for 1.1 million messages on a busy machine). GIN holds no
-- positions and needs none: a query of words and pairs ANDed is answered exactly, and the expression is never
-- computed again for the rows it returns.
CREATE INDEX messages_search_words_idx ON messages USING gin (msg_words(search_text));
CREATE INDEX conversations_search_words_idx ON conversations USING gin (msg_words(search_text));
