import { sentences, truncate } from '../local/text';
import { foldedWords, QueryTerms } from './terms';

/** The longest excerpt quoted in a draft or shown as a source. */
export const EXCERPT_MAX = 400;

/** Markdown marks a customer should not see in a quoted passage: heading hashes, emphasis, links, list bullets. */
export function plainText(markdown: string): string {
  return markdown
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\(([^)]+)\)/g, '$1 ($2)')
    .replace(/^\s{0,3}#{1,6}\s+/gm, '')
    .replace(/^\s*[-*+]\s+/gm, '')
    .replace(/(\*\*|__)(.+?)\1/g, '$2')
    .replace(/`([^`]+)`/g, '$1');
}

export interface Match {
  /** Share of the question's terms found (pairs count twice): 0..1. */
  coverage: number;
  words: number;
  pairs: number;
}

/** How much of a question's terms a text holds: words and adjacent pairs, compared folded. */
export function matchOf(terms: QueryTerms, text: string): Match {
  const folded = foldedWords(text);
  const have = new Set(folded);
  const havePairs = new Set(folded.slice(1).map((w, i) => `${folded[i]} ${w}`));
  const words = terms.words.filter((w) => have.has(w)).length;
  const pairs = terms.pairs.filter((p) => havePairs.has(p)).length;
  const possible = terms.words.length + 2 * terms.pairs.length;
  return { coverage: possible ? (words + 2 * pairs) / possible : 0, words, pairs };
}

/**
 * Whether a chunk answers the question well enough to quote: two of its words at least, and one of its word
 * pairs or half of everything it asks. One shared word ("giá", "ship") is chance, not an answer.
 */
export function answers(m: Match): boolean {
  return m.words >= 2 && (m.pairs >= 1 || m.coverage >= 0.5);
}

/** A line that only names a section (a heading, "Bảo hành:"): it says nothing alone. */
const isLabel = (s: string) => s.length < 40 && !/[.!?…]$/.test(s);

/**
 * The passage of a chunk that answers the question: its best-matching sentence, with the next one when that
 * sentence is only a label or short, at most EXCERPT_MAX characters. Without terms, the chunk's opening.
 */
export function excerptOf(chunk: string, terms?: QueryTerms): string {
  const list = sentences(plainText(chunk));
  if (!list.length) return '';
  let best = 0;
  if (terms && (terms.words.length || terms.pairs.length)) {
    let bestScore = -1;
    list.forEach((s, i) => {
      const m = matchOf(terms, s);
      // A labelled line ranks below a sentence that says as much: the sentence is the answer.
      const score = m.words + 2 * m.pairs - (isLabel(s) ? 0.5 : 0);
      if (score > bestScore) {
        bestScore = score;
        best = i;
      }
    });
  }
  const parts = [list[best]];
  for (let i = best + 1; i < list.length && (isLabel(parts.join(' ')) || parts.join(' ').length < 120); i++) parts.push(list[i]);
  return truncate(parts.join(' '), EXCERPT_MAX);
}
