import { z } from 'zod';
import { knowledgeRules } from '@crm/validation';
import { s } from '../http/validate';

// The knowledge base's requests and answers (ai's KnowledgeService, issue #32). Limits follow @crm/validation
// knowledgeRules, which ai applies too.

export const CONTENT_MESSAGE = `must be at most ${knowledgeRules.CONTENT_MAX.toLocaleString('en-US')} characters of text`;

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

const iso = () => z.string().meta({ description: 'ISO 8601 UTC timestamp' });

const Base = {
  id: z.string(),
  title: z.string(),
  chunks: z.number().int().meta({ description: 'the passages the article was cut into (each searched and quoted on its own)' }),
  source: z.enum(['text', 'file']).meta({ description: 'typed in the request, or read from an uploaded file' }),
  fileName: z.string().nullable().meta({ description: 'the uploaded file’s name; null for typed articles' }),
  createdAt: iso(),
  updatedAt: iso(),
};
/** A new article (createdArticleOut is typed by it). */
export const CreatedArticle = z.object(Base);
/** An article in a list (articleItemOut is typed by it). */
export const ArticleItem = z.object({
  ...Base,
  excerpt: z.string().meta({ description: 'the article’s opening, or with `search` the passage that matched' }),
});
/** One article, whole (articleOut is typed by it). */
export const Article = z.object({
  ...Base,
  content: z.string(),
  contentType: z.string().nullable().meta({ description: 'text/plain, text/markdown or application/pdf for uploads; null for typed articles' }),
  createdBy: z.string().nullable(),
});
