import type { Queryable } from '@crm/db';
import { candidateChunks, ChunkHit } from './articles.repo';
import { answers, excerptOf, Match, matchOf } from './passages';
import { anyOf, QueryTerms, queryTerms } from './terms';

/** A passage of an article that answers a customer's message, as a draft quotes and cites it. */
export interface Passage {
  articleId: string;
  title: string;
  excerpt: string;
  /** Share of the message's terms the chunk holds (0..1): how sure the answer is. */
  coverage: number;
}

/**
 * Where candidate chunks come from. Full text is the only source here: this server has no pgvector, and the
 * local engine has no embeddings. A vector source (an embedding column beside `tsv`, filled by a provider that
 * gives embeddings) would be a second ChunkSource, its hits merged with these before the same ranking below.
 */
export interface ChunkSource {
  candidates(db: Queryable, orgId: string, terms: QueryTerms, limit: number): Promise<ChunkHit[]>;
}

export const fullTextSource: ChunkSource = {
  async candidates(db, orgId, terms, limit) {
    const tsquery = anyOf(terms.words);
    return tsquery ? candidateChunks(db, orgId, tsquery, limit) : [];
  },
};

const CANDIDATES = 30;

/** The best answering chunk of each article, best first, from candidate chunks already fetched. */
export function rankPassages(terms: QueryTerms, hits: ChunkHit[], max: number): Passage[] {
  const scored: { hit: ChunkHit; match: Match }[] = [];
  for (const hit of hits) {
    const match = matchOf(terms, `${hit.title}\n${hit.content}`);
    if (answers(match)) scored.push({ hit, match });
  }
  scored.sort((a, b) => b.match.coverage - a.match.coverage || b.hit.rank - a.hit.rank);
  const out: Passage[] = [];
  for (const { hit, match } of scored) {
    if (out.some((p) => p.articleId === hit.article_id)) continue;
    out.push({ articleId: hit.article_id, title: hit.title, excerpt: excerptOf(hit.content, terms), coverage: Math.min(1, match.coverage) });
    if (out.length >= max) break;
  }
  return out;
}

/** The org's passages that answer `text` (a customer's message), best first; none when nothing answers it. */
export async function passagesFor(db: Queryable, orgId: string, text: string, max = 3, source: ChunkSource = fullTextSource): Promise<Passage[]> {
  const terms = queryTerms(text);
  if (terms.words.length < 2) return [];
  return rankPassages(terms, await source.candidates(db, orgId, terms, CANDIDATES), max);
}
