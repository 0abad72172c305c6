import type { ai } from '@crm/proto-types';

type Article = ai.Article__Output;

/** What every shape of an article says; absent file details are null. */
function base(a: Article) {
  return {
    id: a.id,
    title: a.title,
    chunks: a.chunks,
    source: a.source,
    fileName: a.fileName ?? null,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
  };
}

/** A new article (201): what was stored and how many chunks it was cut into. */
export const createdArticleOut = (a: Article) => base(a);

/** An article in a list: its excerpt (the start, or the passage a search matched) instead of its text. */
export const articleItemOut = (a: Article) => ({ ...base(a), excerpt: a.excerpt });

/** One article, whole. */
export const articleOut = (a: Article) => ({ ...base(a), content: a.content, contentType: a.contentType ?? null, createdBy: a.createdBy ?? null });
