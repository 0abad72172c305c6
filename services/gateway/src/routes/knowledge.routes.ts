import { Router, type RequestHandler } from 'express';
import { knowledgeRules } from '@crm/validation';
import { page } from './common.schemas';
import { HttpError } from '../http/errors';
import { requirePermission } from '../http/permission';
import { ctxOf } from '../http/principal';
import { responseContract } from '../http/response-contract';
import { routeArea } from '../http/route-area';
import type { RouteDeps, ServiceRoutes } from './deps';
import { articleItemOut, articleOut, createdArticleOut } from './knowledge.out';
import { Article, ArticleItem, ArticlePatch, ArticleQuery, CONTENT_MESSAGE, CreatedArticle, NewArticle } from './knowledge.schemas';
import { isMultipart, readKnowledgeUpload } from './knowledge-upload';

// The knowledge base (ai's KnowledgeService, issue #32): anyone of the organization reads it; owners and admins
// (settings:edit) write it. Limits follow @crm/validation knowledgeRules, which ai applies too.

/** Upload and PDF reading take longer than a row's write: a PDF gets up to 15 s in ai. */
const UPLOAD_DEADLINE_MS = 30_000;
const MB = knowledgeRules.FILE_MAX_BYTES / (1024 * 1024);

/** Too much text is a 413 naming the field, before the body is validated further or sent on. */
const refuseLongContent: RequestHandler = (req, _res, next) => {
  const c = (req.body as { content?: unknown } | undefined)?.content;
  if (typeof c === 'string' && c.trim().length > knowledgeRules.CONTENT_MAX)
    throw new HttpError(413, 'payload_too_large', `content: ${CONTENT_MESSAGE}`, [{ field: 'content', message: CONTENT_MESSAGE }]);
  next();
};

/**
 * The knowledge base reply drafts answer from (POST /ai/reply-draft cites the articles it used in `sources`).
 * Anyone of the organization reads it; owners and admins write it (403 otherwise). Another organization’s
 * article is 404. Served and documented from these declarations; POST /ai/knowledge's file form (multipart) is
 * read by the stream router below, before the JSON parser, and documented here (`orFile`).
 */
export const knowledgeArea = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'AI assistant' });
const knowledge = (deps: RouteDeps) => deps.clients.aiKnowledge;

knowledgeArea.route('POST /ai/knowledge', {
  summary: 'Add an article to the knowledge base: typed, or an uploaded text, Markdown or PDF file (admins and owners)',
  description:
    `JSON \`{title, content}\`, or multipart/form-data with the file in \`file\` (.txt, .md or a PDF with a text layer; at most ${MB} MB: ` +
    `413 naming \`file\` beyond) and an optional \`title\` field (else the file’s name). Text beyond ${knowledgeRules.CONTENT_MAX} characters ` +
    'is 413 naming `content` (or `file`). Another kind of file, a PDF without text, or text that is not UTF-8 is 400 naming `file`. ' +
    'The article is cut into chunks and searched with accents ignored.',
  permission: 'settings:edit',
  middleware: () => [refuseLongContent],
  body: NewArticle,
  orFile: true,
  status: 201,
  response: CreatedArticle,
  errors: [413],
  handler: async ({ body: b, ctx, deps }) =>
    createdArticleOut(await knowledge(deps).CreateArticle({ title: b.title, content: b.content, fileName: '', contentType: '' }, ctx)),
});
knowledgeArea.route('GET /ai/knowledge', {
  summary: 'The knowledge base’s articles, newest first; with `search`, those holding every word, best first',
  query: ArticleQuery,
  paging: { limit: 20, max: 100 },
  response: page(ArticleItem),
  handler: async ({ query: q, page, ctx, deps }) => {
    const out = await knowledge(deps).ListArticles({ search: q.search ?? '', ...page }, ctx);
    return { data: out.data.map(articleItemOut), pagination: out.pagination! };
  },
});
knowledgeArea.route('GET /ai/knowledge/:id', {
  summary: 'One knowledge-base article, with its text',
  response: Article,
  handler: async ({ param, ctx, deps }) => articleOut(await knowledge(deps).GetArticle({ id: param('id') }, ctx)),
});
knowledgeArea.route('PUT /ai/knowledge/:id', {
  summary: 'Change an article’s title and/or text (admins and owners); new text is cut into chunks again',
  permission: 'settings:edit',
  middleware: () => [refuseLongContent],
  body: ArticlePatch,
  response: Article,
  errors: [413],
  handler: async ({ param, body, ctx, deps }) => articleOut(await knowledge(deps).UpdateArticle({ id: param('id'), ...body }, ctx)),
});
knowledgeArea.route('DELETE /ai/knowledge/:id', {
  summary: 'Delete an article (admins and owners); drafts no longer answer from it',
  permission: 'settings:edit',
  status: 204,
  response: null,
  handler: async ({ param, ctx, deps }) => {
    await knowledge(deps).DeleteArticle({ id: param('id') }, ctx);
  },
});

export function knowledgeRoutes(deps: RouteDeps): ServiceRoutes {
  const { clients, auth } = deps;
  const stream = Router();

  // A file upload (multipart/form-data: `file`, optional `title`) is read here, before the JSON parser; a JSON body
  // goes on to the declared route.
  stream.post(
    '/ai/knowledge',
    (req, _res, next) => (isMultipart(req) ? next() : next('route')),
    auth.bearer,
    requirePermission('settings:edit'),
    async (req, res) => {
      const upload = await readKnowledgeUpload(req);
      if (upload.title.length > knowledgeRules.TITLE_MAX)
        throw new HttpError(400, 'invalid_argument', `title: must be at most ${knowledgeRules.TITLE_MAX} characters`, [
          { field: 'title', message: `must be at most ${knowledgeRules.TITLE_MAX} characters` },
        ]);
      const out = await clients.aiKnowledge.CreateArticle(
        { title: upload.title.trim(), content: '', file: upload.file, fileName: upload.fileName, contentType: upload.contentType },
        ctxOf(req, res),
        { deadlineMs: UPLOAD_DEADLINE_MS },
      );
      res.status(201).json(createdArticleOut(out));
    },
  );

  return { internal: knowledgeArea.router(deps, responseContract(deps.config)), stream };
}
