-- Longer words as words (issue #12). In message text a term of several words, none of one or two letters, matched
-- each word as a substring anywhere, through the trigram index: a name such as "Hoàng Hoa" that no message holds
-- rechecked every message holding its trigrams apart ("hoa", "oan", "ang" in "hoàn … hàng": 36,000 of a million,
-- 110-480 ms). Each word is now a word of the text, the last one the start of a word (src/domain/search-text.ts
-- wordStartRule), looked for through the word index:
--   - a word of four characters or more by the whole-word token added here ('hoang': no posting at all);
--   - a word of three characters, and a last word of letters, by the token msg_words keeps for every word, its
--     first three characters ('hoa' is every word starting with "hoa"); a last word with a digit, a code, as a
--     prefix of the whole-word tokens ('sp1270':*). A regular expression checks what a token says only in part.
--
-- msg_words (migrations 010, 011) now also keeps each word of four characters or more whole, up to 32 characters (a
-- longer run, a hash or a piece of a link, is kept cut: a search for it takes the cut as a prefix and its regular
-- expression decides). A whole token never collides with the others: a first-three token has three characters and
-- a pair has "~" as its fourth, so four letters or digits, prefix or not, find only whole tokens. The queries of
-- short words and pairs find what they found: 'an':* also reads the whole tokens starting with "an", messages it
-- found already by their first three characters (on a million messages 'ha':* read its 418,320 rows in the same
-- time as before).
-- Cost: the index grows by the distinct longer words of each message (a million messages: 23 → 31 MB); computing
-- msg_words is no slower (one more array element per longer word beside the split); the GIN pending list takes
-- more entries per message (flushing 10,000 messages' entries: ~50 → ~100 ms on a busy machine).
CREATE OR REPLACE FUNCTION msg_words(text) RETURNS tsvector
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT
  AS $$
DECLARE
  words text[] := regexp_split_to_array($1, '[^[:alnum:]]+');
  n int := cardinality(words);
  tokens text[] := '{}';
  w text;
  nxt text;
BEGIN
  FOR i IN 1..n LOOP
    w := words[i];
    -- The split leaves an empty string at either end when the text starts or ends with a separator.
    CONTINUE WHEN w = '';
    tokens := tokens || left(w, 3);
    -- Characters, not bytes, as isShortWord counts them.
    IF length(w) > 3 THEN
      tokens := tokens || left(w, 32);
    END IF;
    IF i < n THEN
      nxt := words[i + 1];
      IF nxt <> '' AND (length(w) <= 2 OR length(nxt) <= 2) THEN
        tokens := tokens || (left(w, 3) || '~' || left(nxt, 3));
      END IF;
    END IF;
  END LOOP;
  RETURN array_to_tsvector(tokens);
END
$$;

-- The indexes hold the function's former tokens: rebuilt from the new one. Writes to the table wait meanwhile
-- (about 20-30 s for a million messages); reads go on.
REINDEX INDEX messages_search_words_idx;
REINDEX INDEX conversations_search_words_idx;
