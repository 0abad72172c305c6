import { z } from 'zod';
import { knowledgeRules } from '@crm/validation';
import { ArticlePatch, ArticleQuery, NewArticle } from '../../routes/knowledge.routes';
import type { articleItemOut, articleOut, createdArticleOut } from '../../routes/knowledge.out';
import { keysMatch } from '../schemas/check';
import { page } from '../schemas/common';
import { area } from '../registry';

const iso = () => z.string().meta({ description: 'ISO 8601 UTC timestamp' });
const MB = knowledgeRules.FILE_MAX_BYTES / (1024 * 1024);

const Base = {
  id: z.string(),
  title: z.string(),
  chunks: z.number().int().meta({ description: 'the passages the article was cut into (each searched and quoted on its own)' }),
  source: z.enum(['text', 'file']).meta({ description: 'typed in the request, or read from an uploaded file' }),
  fileName: z.string().nullable().meta({ description: 'the uploaded file’s name; null for typed articles' }),
  createdAt: iso(),
  updatedAt: iso(),
};
const CreatedArticle = z.object(Base);
keysMatch<z.infer<typeof CreatedArticle>, ReturnType<typeof createdArticleOut>>(true);
const ArticleItem = z.object({
  ...Base,
  excerpt: z.string().meta({ description: 'the article’s opening, or with `search` the passage that matched' }),
});
keysMatch<z.infer<typeof ArticleItem>, ReturnType<typeof articleItemOut>>(true);
const Article = z.object({
  ...Base,
  content: z.string(),
  contentType: z.string().nullable().meta({ description: 'text/plain, text/markdown or application/pdf for uploads; null for typed articles' }),
  createdBy: z.string().nullable(),
});
keysMatch<z.infer<typeof Article>, ReturnType<typeof articleOut>>(true);

/**
 * The knowledge base reply drafts answer from (POST /ai/reply-draft cites the articles it used in `sources`).
 * Anyone of the organization reads it; owners and admins write it (403 otherwise). Another organization’s
 * article is 404.
 */
const kb = area({ prefix: '/api/v1', auth: 'bearer', tag: 'AI assistant' });
kb.op('POST /ai/knowledge', {
  summary: 'Add an article to the knowledge base: typed, or an uploaded text, Markdown or PDF file (admins and owners)',
  description:
    `JSON \`{title, content}\`, or multipart/form-data with the file in \`file\` (.txt, .md or a PDF with a text layer; at most ${MB} MB: ` +
    `413 naming \`file\` beyond) and an optional \`title\` field (else the file’s name). Text beyond ${knowledgeRules.CONTENT_MAX} characters ` +
    'is 413 naming `content` (or `file`). Another kind of file, a PDF without text, or text that is not UTF-8 is 400 naming `file`. ' +
    'The article is cut into chunks and searched with accents ignored.',
  body: NewArticle,
  orFile: true,
  responses: { 201: CreatedArticle },
  errors: [413],
});
kb.op('GET /ai/knowledge', {
  summary: 'The knowledge base’s articles, newest first; with `search`, those holding every word, best first',
  query: ArticleQuery,
  paging: { limit: 20, max: 100 },
  responses: { 200: page(ArticleItem) },
});
kb.op('GET /ai/knowledge/:id', {
  summary: 'One knowledge-base article, with its text',
  responses: { 200: Article },
});
kb.op('PUT /ai/knowledge/:id', {
  summary: 'Change an article’s title and/or text (admins and owners); new text is cut into chunks again',
  body: ArticlePatch,
  responses: { 200: Article },
  errors: [413],
});
kb.op('DELETE /ai/knowledge/:id', {
  summary: 'Delete an article (admins and owners); drafts no longer answer from it',
  responses: { 204: null },
});

export const knowledgeOps = kb.ops;
