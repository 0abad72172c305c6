import type { HandlersFor } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import * as articles from './articles';

/** ai.v1.KnowledgeService: decode, call the domain, return; errors are mapped by grpc-kit. */
export function knowledgeHandlers(deps: Deps): HandlersFor<'ai.v1.KnowledgeService'> {
  return {
    CreateArticle: (req, ctx) =>
      articles.create(deps, ctx, {
        title: req.title,
        content: req.content,
        file: req.file ?? null,
        fileName: req.fileName,
        contentType: req.contentType,
      }),
    ListArticles: (req, ctx) => articles.list(deps, ctx, req),
    GetArticle: (req, ctx) => articles.get(deps, ctx, req.id),
    UpdateArticle: (req, ctx) => articles.update(deps, ctx, req),
    DeleteArticle: (req, ctx) => articles.remove(deps, ctx, req.id),
  };
}
