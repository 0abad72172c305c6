import type { z } from 'zod';
import type { ai } from '@crm/proto-types';
import type { Article as ArticleSchema, ArticleItem, CreatedArticle } from './knowledge.schemas';

type Article = ai.Article__Output;

/** What every shape of an article says; absent file details are null. */
function base(a: Article): z.input<typeof CreatedArticle> {
  return {
    id: a.id,
    title: a.title,
    chunks: a.chunks,
    source: a.source as z.input<typeof CreatedArticle>['source'],
    fileName: a.fileName ?? null,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
  };
}

/** A new article (201): what was stored and how many chunks it was cut into. */
export const createdArticleOut = (a: Article): z.input<typeof CreatedArticle> => base(a);

/** An article in a list: its excerpt (the start, or the passage a search matched) instead of its text. */
export const articleItemOut = (a: Article): z.input<typeof ArticleItem> => ({ ...base(a), excerpt: a.excerpt });

/** One article, whole. */
export const articleOut = (a: Article): z.input<typeof ArticleSchema> => ({
  ...base(a),
  content: a.content,
  contentType: a.contentType ?? null,
  createdBy: a.createdBy ?? null,
});
