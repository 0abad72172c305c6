import { Router } from 'express';
import { z } from 'zod';
import { knowledgeRules } from '@crm/validation';
import type { RouteDeps, ServiceRoutes } from './deps';
import { articleItemOut, articleOut, createdArticleOut } from './knowledge.out';
import { isMultipart, readKnowledgeUpload } from './knowledge-upload';
import { HttpError } from '../http/errors';
import { requirePermission } from '../http/permission';
import { ctxOf } from '../http/principal';
import { body, pageParams, pathParam, query, s } from '../http/validate';

// The knowledge base (ai's KnowledgeService, issue #32): anyone of the organization reads it; owners and admins
// (settings:edit) write it. Limits follow @crm/validation knowledgeRules, which ai applies too.

/** Upload and PDF reading take longer than a row's write: a PDF gets up to 15 s in ai. */
const UPLOAD_DEADLINE_MS = 30_000;
const CONTENT_MESSAGE = `must be at most ${knowledgeRules.CONTENT_MAX.toLocaleString('en-US')} characters of text`;

const content = () =>
  z
    .string({ error: 'is required' })
    .refine((v) => v.trim().length > 0, 'is required')
    .refine((v) => !v.includes('\u0000'), 'must not contain NUL characters');

export const NewArticle = z.object({
  title: s.requiredText(knowledgeRules.TITLE_MAX),
  content: content().meta({ description: `at most ${knowledgeRules.CONTENT_MAX} characters (413 naming content beyond)` }),
});
export const ArticlePatch = z
  .object({ title: s.requiredText(knowledgeRules.TITLE_MAX).optional(), content: content().optional() })
  .refine((b) => b.title !== undefined || b.content !== undefined, { message: 'title or content is required', path: ['title'] });
export const ArticleQuery = z.object({
  search: s
    .text(knowledgeRules.SEARCH_MAX)
    .optional()
    .meta({ description: 'words to find in titles and text, accents ignored ("bao hanh" finds "Bảo hành")' }),
});

/** Too much text is a 413 naming the field, before the body is validated further or sent on. */
function refuseLongContent(b: unknown): void {
  const c = (b as { content?: unknown } | undefined)?.content;
  if (typeof c === 'string' && c.trim().length > knowledgeRules.CONTENT_MAX)
    throw new HttpError(413, 'payload_too_large', `content: ${CONTENT_MESSAGE}`, [{ field: 'content', message: CONTENT_MESSAGE }]);
}

export function knowledgeRoutes({ clients, auth }: RouteDeps): ServiceRoutes {
  const r = Router();
  const stream = Router();

  // A file upload (multipart/form-data: `file`, optional `title`) is read here, before the JSON parser; a JSON body
  // goes on to the route below.
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

  r.post('/ai/knowledge', requirePermission('settings:edit'), async (req, res) => {
    refuseLongContent(req.body);
    const b = body(req, NewArticle);
    res
      .status(201)
      .json(
        createdArticleOut(
          await clients.aiKnowledge.CreateArticle({ title: b.title, content: b.content, fileName: '', contentType: '' }, ctxOf(req, res)),
        ),
      );
  });
  r.get('/ai/knowledge', async (req, res) => {
    const q = query(req, ArticleQuery);
    const out = await clients.aiKnowledge.ListArticles({ search: q.search ?? '', ...pageParams(req, 20, 100) }, ctxOf(req, res));
    res.json({ data: out.data.map(articleItemOut), pagination: out.pagination });
  });
  r.get('/ai/knowledge/:id', async (req, res) => {
    res.json(articleOut(await clients.aiKnowledge.GetArticle({ id: pathParam(req, 'id') }, ctxOf(req, res))));
  });
  r.put('/ai/knowledge/:id', requirePermission('settings:edit'), async (req, res) => {
    refuseLongContent(req.body);
    const b = body(req, ArticlePatch);
    res.json(articleOut(await clients.aiKnowledge.UpdateArticle({ id: pathParam(req, 'id'), ...b }, ctxOf(req, res))));
  });
  r.delete('/ai/knowledge/:id', requirePermission('settings:edit'), async (req, res) => {
    await clients.aiKnowledge.DeleteArticle({ id: pathParam(req, 'id') }, ctxOf(req, res));
    res.status(204).end();
  });

  return { internal: r, stream };
}
