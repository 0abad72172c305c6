-- The organization's knowledge base (issue #32): articles written or uploaded by its admins, answered from by
-- reply drafts. An article is cut into chunks of a few paragraphs; each chunk is what a draft quotes and cites.
CREATE TABLE knowledge_articles (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  title text NOT NULL,
  content text NOT NULL,
  -- text (typed in the request) | file (uploaded; file_name and content_type say what it was)
  source text NOT NULL DEFAULT 'text' CHECK (source IN ('text', 'file')),
  file_name text,
  content_type text,
  chunk_count integer NOT NULL,
  created_by uuid,
  updated_by uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX knowledge_articles_org_updated ON knowledge_articles (org_id, updated_at DESC, id);

-- Search works on folded text (lower case, Vietnamese diacritics stripped, đ → d; the local engine's own
-- folding, done by the service): "bao hanh" finds "Bảo hành". The 'simple' configuration keeps every word
-- as it is, which suits Vietnamese (one syllable a word) and English alike. Vectors (pgvector) are not on
-- this server; a vector column would sit beside tsv (services/ai/src/knowledge/retrieval.ts).
CREATE TABLE knowledge_chunks (
  article_id uuid NOT NULL REFERENCES knowledge_articles (id) ON DELETE CASCADE,
  org_id uuid NOT NULL,
  position integer NOT NULL,
  content text NOT NULL,
  title_folded text NOT NULL,
  content_folded text NOT NULL,
  tsv tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('simple', title_folded), 'A') || setweight(to_tsvector('simple', content_folded), 'B')
  ) STORED,
  PRIMARY KEY (article_id, position)
);
CREATE INDEX knowledge_chunks_tsv ON knowledge_chunks USING gin (tsv);
CREATE INDEX knowledge_chunks_org ON knowledge_chunks (org_id);
