import type { Queryable } from '@crm/db';

// The knowledge base's tables (migrations/002_knowledge.sql): only this module names them.

export interface ArticleRow {
  id: string;
  org_id: string;
  title: string;
  content: string;
  source: 'text' | 'file';
  file_name: string | null;
  content_type: string | null;
  chunk_count: number;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

/** An article in a list: no content, but the passage that stands for it. */
export type ArticleListRow = Omit<ArticleRow, 'content'> & { passage: string };

export interface ChunkInput {
  content: string;
  titleFolded: string;
  contentFolded: string;
}

export async function insertArticle(
  db: Queryable,
  a: {
    id: string;
    orgId: string;
    title: string;
    content: string;
    source: 'text' | 'file';
    fileName: string | null;
    contentType: string | null;
    chunks: number;
    userId: string | null;
  },
): Promise<ArticleRow> {
  const { rows } = await db.query<ArticleRow>(
    `INSERT INTO knowledge_articles (id, org_id, title, content, source, file_name, content_type, chunk_count, created_by, updated_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING *`,
    [a.id, a.orgId, a.title, a.content, a.source, a.fileName, a.contentType, a.chunks, a.userId],
  );
  return rows[0];
}

/** Replace an article's chunks (all of them: a changed text is cut again from the start). */
export async function replaceChunks(db: Queryable, orgId: string, articleId: string, chunks: ChunkInput[]): Promise<void> {
  await db.query('DELETE FROM knowledge_chunks WHERE article_id = $1 AND org_id = $2', [articleId, orgId]);
  if (!chunks.length) return;
  await db.query(
    `INSERT INTO knowledge_chunks (article_id, org_id, position, content, title_folded, content_folded)
     SELECT $1, $2, p - 1, c, t, f FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS x(c, t, f, p)`,
    [articleId, orgId, chunks.map((c) => c.content), chunks.map((c) => c.titleFolded), chunks.map((c) => c.contentFolded)],
  );
}

/** The title of every chunk follows its article's: it is searched with the chunk. */
export async function retitleChunks(db: Queryable, orgId: string, articleId: string, titleFolded: string): Promise<void> {
  await db.query('UPDATE knowledge_chunks SET title_folded = $3 WHERE article_id = $1 AND org_id = $2', [articleId, orgId, titleFolded]);
}

export async function findArticle(db: Queryable, orgId: string, id: string, lock = false): Promise<ArticleRow | undefined> {
  const { rows } = await db.query<ArticleRow>(`SELECT * FROM knowledge_articles WHERE id = $1 AND org_id = $2${lock ? ' FOR UPDATE' : ''}`, [
    id,
    orgId,
  ]);
  return rows[0];
}

export async function updateArticle(
  db: Queryable,
  orgId: string,
  id: string,
  a: { title: string; content: string; chunks: number; userId: string | null },
): Promise<ArticleRow> {
  const { rows } = await db.query<ArticleRow>(
    `UPDATE knowledge_articles SET title = $3, content = $4, chunk_count = $5, updated_by = $6, updated_at = now()
     WHERE id = $1 AND org_id = $2 RETURNING *`,
    [id, orgId, a.title, a.content, a.chunks, a.userId],
  );
  return rows[0];
}

export async function deleteArticle(db: Queryable, orgId: string, id: string): Promise<ArticleRow | undefined> {
  const { rows } = await db.query<ArticleRow>('DELETE FROM knowledge_articles WHERE id = $1 AND org_id = $2 RETURNING *', [id, orgId]);
  return rows[0];
}

const LIST_COLUMNS = 'a.id, a.org_id, a.title, a.source, a.file_name, a.content_type, a.chunk_count, a.created_by, a.created_at, a.updated_at';

/** Newest first; the passage is the article's first chunk. */
export async function listArticles(db: Queryable, orgId: string, limit: number, offset: number): Promise<{ rows: ArticleListRow[]; total: number }> {
  const [page, count] = await Promise.all([
    db.query<ArticleListRow>({
      name: 'knowledge_list',
      text: `SELECT ${LIST_COLUMNS}, COALESCE(c.content, '') AS passage FROM knowledge_articles a
             LEFT JOIN knowledge_chunks c ON c.article_id = a.id AND c.position = 0
             WHERE a.org_id = $1 ORDER BY a.updated_at DESC, a.id LIMIT $2 OFFSET $3`,
      values: [orgId, limit, offset],
    }),
    db.query<{ n: number }>({ name: 'knowledge_count', text: 'SELECT count(*) AS n FROM knowledge_articles WHERE org_id = $1', values: [orgId] }),
  ]);
  return { rows: page.rows, total: count.rows[0].n };
}

/** Articles with a chunk matching `tsquery`, best first; the passage is that chunk. */
export async function searchArticles(
  db: Queryable,
  orgId: string,
  tsquery: string,
  limit: number,
  offset: number,
): Promise<{ rows: ArticleListRow[]; total: number }> {
  const { rows } = await db.query<ArticleListRow & { total: number }>({
    name: 'knowledge_search',
    text: `WITH hits AS (
             SELECT DISTINCT ON (c.article_id) c.article_id, c.content, ts_rank_cd(c.tsv, q) AS rank
             FROM knowledge_chunks c, to_tsquery('simple', $2) q
             WHERE c.org_id = $1 AND c.tsv @@ q
             ORDER BY c.article_id, rank DESC, c.position
           )
           SELECT ${LIST_COLUMNS}, h.content AS passage, count(*) OVER () AS total
           FROM hits h JOIN knowledge_articles a ON a.id = h.article_id AND a.org_id = $1
           ORDER BY h.rank DESC, a.updated_at DESC, a.id LIMIT $3 OFFSET $4`,
    values: [orgId, tsquery, limit, offset],
  });
  let total = rows[0]?.total ?? 0;
  if (!rows.length && offset > 0) {
    // Past the last page: the count still says how many there are.
    const c = await db.query<{ n: number }>(
      `SELECT count(DISTINCT article_id) AS n FROM knowledge_chunks c, to_tsquery('simple', $2) q WHERE c.org_id = $1 AND c.tsv @@ q`,
      [orgId, tsquery],
    );
    total = c.rows[0].n;
  }
  return { rows: rows.map(({ total: _t, ...r }) => r), total };
}

export interface ChunkHit {
  article_id: string;
  title: string;
  position: number;
  content: string;
  rank: number;
}

/** Chunks of the org matching any word of `tsquery`, best ranked first: the candidates a draft is chosen from. */
export async function candidateChunks(db: Queryable, orgId: string, tsquery: string, limit: number): Promise<ChunkHit[]> {
  const { rows } = await db.query<ChunkHit>({
    name: 'knowledge_candidates',
    text: `SELECT c.article_id, a.title, c.position, c.content, ts_rank_cd(c.tsv, q) AS rank
           FROM knowledge_chunks c JOIN knowledge_articles a ON a.id = c.article_id AND a.org_id = $1, to_tsquery('simple', $2) q
           WHERE c.org_id = $1 AND c.tsv @@ q
           ORDER BY rank DESC, a.updated_at DESC, c.position LIMIT $3`,
    values: [orgId, tsquery, limit],
  });
  return rows;
}
