import { randomUUID } from 'node:crypto';
import { isUuid, withTransaction } from '@crm/db';
import { recordAudit } from '@crm/events';
import { invalid, notFound, OrgContext, requireCan } from '@crm/grpc-kit';
import { knowledgeRules, optionalText } from '@crm/validation';
import type { Deps } from '../deps';
import { foldKey } from '../local/text';
import * as repo from './articles.repo';
import { chunkArticle } from './chunking';
import { fileText } from './file-text';
import { excerptOf } from './passages';
import { allOf, queryTerms } from './terms';

// Articles of the organization's knowledge base. Anyone of the org reads them (agents draft replies from them);
// writing them needs settings:edit (owners and admins), as the assistant's other settings do.

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

type ArticleOut = {
  id: string;
  title: string;
  content: string;
  chunks: number;
  source: string;
  fileName?: string;
  contentType?: string;
  excerpt: string;
  createdAt: string;
  updatedAt: string;
  createdBy?: string;
};

function out(row: Omit<repo.ArticleRow, 'content'> & { content?: string }, excerpt: string): ArticleOut {
  return {
    id: row.id,
    title: row.title,
    content: row.content ?? '',
    chunks: row.chunk_count,
    source: row.source,
    ...(row.file_name !== null ? { fileName: row.file_name } : {}),
    ...(row.content_type !== null ? { contentType: row.content_type } : {}),
    excerpt,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    ...(row.created_by ? { createdBy: row.created_by } : {}),
  };
}

/** The chunks of an article as stored: their text, and the folded forms search reads. */
function chunksOf(title: string, content: string): repo.ChunkInput[] {
  const titleFolded = foldKey(title);
  return chunkArticle(content).map((c) => ({ content: c, titleFolded, contentFolded: foldKey(c) }));
}

/** An id that is not a UUID names no article: 404, as another org's does. */
function articleId(id: string | undefined): string {
  if (!isUuid(id)) throw notFound('Article');
  return id.toLowerCase();
}

const userOf = (ctx: OrgContext) => (isUuid(ctx.userId) ? ctx.userId : null);
/** A title from an uploaded file's name: "warranty-policy.md" → "warranty-policy". */
const titleFromFile = (fileName: string) =>
  fileName
    .replace(/^.*[\\/]/, '')
    .replace(/\.[^.]+$/, '')
    .trim();

export async function create(
  deps: Deps,
  ctx: OrgContext,
  req: { title?: string; content?: string; file?: Buffer | null; fileName?: string; contentType?: string },
) {
  requireCan(ctx, 'settings:edit');
  let content: string;
  let title: string;
  let file: { name: string; type: string } | null = null;
  if (req.file) {
    if (req.content) throw invalid('content', 'must be empty when a file is uploaded');
    const name = optionalText(req.fileName, 'fileName', knowledgeRules.FILE_NAME_MAX);
    const read = await fileText(req.file, name, req.contentType ?? '');
    content = knowledgeRules.content(read.text, 'file');
    title = knowledgeRules.title(req.title?.trim() || titleFromFile(name) || 'Untitled');
    file = { name, type: read.kind === 'pdf' ? 'application/pdf' : read.kind === 'markdown' ? 'text/markdown' : 'text/plain' };
  } else {
    title = knowledgeRules.title(req.title);
    content = knowledgeRules.content(req.content);
  }
  const chunks = chunksOf(title, content);
  const id = randomUUID();
  const row = await withTransaction(deps.pool, async (db) => {
    const saved = await repo.insertArticle(db, {
      id,
      orgId: ctx.orgId,
      title,
      content,
      source: file ? 'file' : 'text',
      fileName: file?.name || null,
      contentType: file?.type ?? null,
      chunks: chunks.length,
      userId: userOf(ctx),
    });
    await repo.replaceChunks(db, ctx.orgId, id, chunks);
    await recordAudit(db, ctx, {
      action: 'knowledge_article.created',
      resourceType: 'knowledge_article',
      resourceId: id,
      details: { title, chunks: chunks.length },
    });
    return saved;
  });
  return out(row, excerptOf(chunks[0]?.content ?? ''));
}

export async function list(deps: Deps, ctx: OrgContext, req: { search?: string; page?: number; limit?: number }) {
  const search = optionalText(req.search, 'search', knowledgeRules.SEARCH_MAX);
  const limit = Math.min(MAX_LIMIT, Math.max(1, req.limit || DEFAULT_LIMIT));
  const page = Math.min(Math.floor(2 ** 31 / limit) - 1, Math.max(1, req.page || 1));
  const offset = (page - 1) * limit;
  let found: { rows: repo.ArticleListRow[]; total: number };
  const tsquery = search ? allOf(search) : undefined;
  if (!search) found = await repo.listArticles(deps.pool, ctx.orgId, limit, offset);
  // A search of punctuation alone has no word to find.
  else if (!tsquery) found = { rows: [], total: 0 };
  else found = await repo.searchArticles(deps.pool, ctx.orgId, tsquery, limit, offset);
  const terms = search ? queryTerms(search) : undefined;
  return {
    data: found.rows.map((r) => out(r, excerptOf(r.passage, terms))),
    pagination: { total: found.total, page, limit, pages: Math.ceil(found.total / limit) },
  };
}

export async function get(deps: Deps, ctx: OrgContext, id: string | undefined) {
  const row = await repo.findArticle(deps.pool, ctx.orgId, articleId(id));
  if (!row) throw notFound('Article');
  return out(row, excerptOf(chunkArticle(row.content)[0] ?? ''));
}

export async function update(deps: Deps, ctx: OrgContext, req: { id?: string; title?: string; content?: string }) {
  requireCan(ctx, 'settings:edit');
  const id = articleId(req.id);
  if (req.title === undefined && req.content === undefined) throw invalid('title', 'title or content is required');
  const title = req.title !== undefined ? knowledgeRules.title(req.title) : undefined;
  const content = req.content !== undefined ? knowledgeRules.content(req.content) : undefined;
  const row = await withTransaction(deps.pool, async (db) => {
    const current = await repo.findArticle(db, ctx.orgId, id, true);
    if (!current) throw notFound('Article');
    const nextTitle = title ?? current.title;
    const nextContent = content ?? current.content;
    let chunkCount = current.chunk_count;
    if (content !== undefined && content !== current.content) {
      const chunks = chunksOf(nextTitle, nextContent);
      chunkCount = chunks.length;
      await repo.replaceChunks(db, ctx.orgId, id, chunks);
    } else if (nextTitle !== current.title) await repo.retitleChunks(db, ctx.orgId, id, foldKey(nextTitle));
    const saved = await repo.updateArticle(db, ctx.orgId, id, { title: nextTitle, content: nextContent, chunks: chunkCount, userId: userOf(ctx) });
    await recordAudit(db, ctx, {
      action: 'knowledge_article.updated',
      resourceType: 'knowledge_article',
      resourceId: id,
      details: { ...(title !== undefined ? { title: { from: current.title, to: nextTitle } } : {}), contentChanged: nextContent !== current.content },
    });
    return saved;
  });
  return out(row, excerptOf(chunkArticle(row.content)[0] ?? ''));
}

export async function remove(deps: Deps, ctx: OrgContext, idIn: string | undefined) {
  requireCan(ctx, 'settings:edit');
  const id = articleId(idIn);
  await withTransaction(deps.pool, async (db) => {
    const gone = await repo.deleteArticle(db, ctx.orgId, id);
    if (!gone) throw notFound('Article');
    await recordAudit(db, ctx, {
      action: 'knowledge_article.deleted',
      resourceType: 'knowledge_article',
      resourceId: id,
      details: { title: gone.title },
    });
  });
  return { ok: true, message: '' };
}
