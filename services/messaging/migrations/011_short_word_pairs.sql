-- Short words next to longer ones (issue #12). In message text a term holding a word of one or two letters is now
-- a phrase (src/domain/search-text.ts shortWordRule): "Hồ Uyên", "Hoàng Vy". As a set of words such a term read
-- the table for every message that had the words anywhere ("hồ" in "ủng hộ", "uyên" in "chuyển": 15,000 of a
-- million messages, about a second) or for every trigram false positive of its longer word ("hoàng": 36,000 rows
-- holding "hoa", "oan" and "ang" in other words, 0.7 s) where the short word alone would have found nothing.
--
-- msg_words (migration 010) paired a short word with the word after it; it now pairs each two adjacent words of
-- which either is short, each cut to three characters as every token is: "hoàng vy" gives "hoa~vy" beside
-- "vy~...". A pair of two longer words is still not kept (every adjacency of the text would double the index).
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
    IF i < n THEN
      nxt := words[i + 1];
      -- Characters, not bytes, as isShortWord counts them.
      IF nxt <> '' AND (length(w) <= 2 OR length(nxt) <= 2) THEN
        tokens := tokens || (left(w, 3) || '~' || left(nxt, 3));
      END IF;
    END IF;
  END LOOP;
  RETURN array_to_tsvector(tokens);
END
$$;

-- The indexes hold the function's former tokens: rebuilt from the new one. Writes to the table wait meanwhile
-- (about 20 s for a million messages); reads go on.
REINDEX INDEX messages_search_words_idx;
REINDEX INDEX conversations_search_words_idx;
