import { iso, offsetOf, pagination, PageRequest, Queryable } from '@crm/db';
import { escapeLike, escapeRegex, isShortWord, shortWordRule } from '../domain/search-text';
import { senderTypeOf } from './messages.repo';
import { visibleSql } from './visibility.repo';

/** Binds values to $n placeholders of one statement. */
export class Params {
  readonly values: unknown[] = [];
  constructor(...initial: unknown[]) {
    this.values.push(...initial);
  }
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

/**
 * The folded text `${alias}.search_text` holds every word of the term: words of three or more characters as
 * substrings (LIKE, which the trigram index answers), shorter ones as whole words (domain/search-text.ts
 * `shortWordRule`). Shared by the messages and the conversations' name/phone, so both arms of a search agree.
 *
 * The word index condition (`msg_words(text) @@ tsquery`) is what narrows: GIN answers it exactly (no positions
 * needed), so the expression is not computed again for the rows it returns. What it cannot say (punctuation, a
 * token left out) is a regular expression, written `(text ~ pattern) IS TRUE`: as a plain `~` the trigram index
 * takes it as an index condition although it can extract no trigram from a short word, and the planner, trusting
 * the pattern's (tiny) selectivity, rechecked every message holding the other words ("vũ mai": 72,000 rows,
 * seconds). Wrapped, no index takes it and its selectivity is still read from the column's histogram.
 *
 * The phrase of a term of short words only is said by its pair tokens already, so it is written
 * `NULLIF(text ~ phrase, false) IS NOT UNKNOWN` (true exactly where the pattern matches): PostgreSQL has no
 * statistics for that expression and takes it as true for 99.5% of the rows, so the tsquery's share alone decides
 * the plan. Counted twice, "ok em" (3% of the messages) looked 0.1% and all its 33,000 matches were collected
 * through the word index and sorted (0.85-1.1 s); estimated right, PostgreSQL walks the newest messages until 200
 * match, and there the pattern (2 µs a row) runs before msg_words (8 µs), so 6,000 rows cost ~20 ms instead of 50.
 */
export function termMatchSql(p: Params, alias: string, words: string[]): string {
  const text = `${alias}.search_text`;
  const conds = words.filter((w) => !isShortWord(w)).map((w) => `${text} LIKE ${p.add(`%${escapeLike(w)}%`)}`);
  const short = shortWordRule(words);
  conds.push(...short.patterns.map((re) => `(${text} ~ ${p.add(re)}) IS TRUE`));
  if (short.phrase) conds.push(`NULLIF(${text} ~ ${p.add(short.phrase)}, false) IS NOT UNKNOWN`);
  if (short.tsquery) conds.push(`msg_words(${text}) @@ ${p.add(short.tsquery)}::tsquery`);
  return conds.join(' AND ');
}

/**
 * Messages of the org whose folded text holds every word (termMatchSql), newest first, at most `window` of them.
 * `orgRef` is the placeholder already holding the org id. Used by both searches, so the inbox list and the
 * message search agree on what matches.
 *
 * Several words are also offered in the order they were typed, OR'ed with the words: `LIKE '%xuat%hoa%don%'`
 * matches nothing more (it holds every word), but it is what lets PostgreSQL see how common the term is. It
 * estimates the words as independent and multiplies their shares ("xuat", "hoa", "don" at 3-5% each → 0.07%,
 * where "xuat hoa don" is in 3% of the messages), then collects and sorts all 30,000 matches through the
 * trigram bitmap (400 ms) instead of walking the newest messages until `window` match (3 ms). The ordered
 * pattern's own share is read from the column's statistics, so the estimate of the OR is at least that. It is
 * not the phrase with its spaces (`'%xuat hoa don%'`): pg_trgm would read the phrase's trigrams across word
 * boundaries (" ho", "oa "), posting lists as long as the column, and a phrase with a rare code ("bao gia sp12")
 * cost three times the index pages of its words; the ordered pattern has exactly the words' trigrams.
 */
export function newestMatchesSql(p: Params, orgRef: string, words: string[], window: number, extra: string[] = [], columns = 'm.conversation_id'): string {
  const every = termMatchSql(p, 'm', words);
  const ordered = `%${words.map(escapeLike).join('%')}%`;
  const match = words.length > 1 && !words.some(isShortWord) ? `(m.search_text LIKE ${p.add(ordered)} OR (${every}))` : every;
  return `SELECT ${columns} FROM messages m
          WHERE m.org_id = ${orgRef} AND ${[match, ...extra].join(' AND ')}
          ORDER BY m.sent_at DESC, m.id DESC LIMIT ${Math.floor(window)}`;
}

export interface MessageSearch extends PageRequest {
  /** Folded words; all must occur. */
  words: string[];
  /** The term as typed, NFC and lower case: a message holding it with its accents ranks first. */
  typed: string;
  conversationId?: string;
  chatnetAccountId?: string;
  /** [from, to) on sentAt. */
  from?: Date;
  to?: Date;
  /** How many of the newest matching messages are ranked and paged. */
  window: number;
  /** The agent whose inbox visibility limits the hits (null: the whole org). */
  viewer?: string | null;
}

interface HitRow {
  id: string | null;
  conversation_id: string;
  content: string;
  sent_at: Date;
  direction: 'inbound' | 'outbound';
  sent_by_user_id: string | null;
  total: number;
}

/**
 * Ranked matches, best first: 4 points when the folded phrase stands as whole words, 2 when the term occurs as
 * typed (accents included, case ignored), 1 when the folded phrase occurs at all (every word is required
 * anyway); then newest first. The count and the page come from one pass over the window (a page past the end
 * still gets the total).
 */
export async function search(db: Queryable, orgId: string, s: MessageSearch) {
  const p = new Params(orgId);
  const extra: string[] = [];
  if (s.conversationId) extra.push(`m.conversation_id = ${p.add(s.conversationId)}`);
  if (s.chatnetAccountId) extra.push(`m.chatnet_account_id = ${p.add(s.chatnetAccountId)}`);
  if (s.from) extra.push(`m.sent_at >= ${p.add(s.from)}`);
  if (s.to) extra.push(`m.sent_at < ${p.add(s.to)}`);
  // Inside the window's query, so an agent's window holds the newest matches they may see.
  if (s.viewer) extra.push(`EXISTS (SELECT 1 FROM conversations c WHERE c.id = m.conversation_id AND c.org_id = $1 AND ${visibleSql(p.add(s.viewer))})`);
  const hits = newestMatchesSql(p, '$1', s.words, s.window, extra, 'm.id, m.conversation_id, m.content, m.search_text, m.sent_at, m.direction, m.sent_by_user_id');
  const phrase = s.words.join(' ');
  // A boundary is required only where the phrase itself starts or ends with a word character ("#a10" has none before).
  const wholeWords = `${/^\w/.test(phrase) ? '(^|\\W)' : ''}${escapeRegex(phrase)}${/\w$/.test(phrase) ? '(\\W|$)' : ''}`;
  const rank = `(CASE WHEN h.search_text ~ ${p.add(wholeWords)} THEN 4 ELSE 0 END
                + CASE WHEN strpos(lower(normalize(h.content, NFC)), ${p.add(s.typed)}) > 0 THEN 2 ELSE 0 END
                + CASE WHEN strpos(h.search_text, ${p.add(phrase)}) > 0 THEN 1 ELSE 0 END)`;
  const { rows } = await db.query<HitRow>(
    `WITH hits AS (${hits})
     SELECT r.id, r.conversation_id, r.content, r.sent_at, r.direction, r.sent_by_user_id, t.total
     FROM (SELECT count(*)::int AS total FROM hits) t
     LEFT JOIN LATERAL (
       SELECT h.*, ${rank} AS rank FROM hits h ORDER BY rank DESC, h.sent_at DESC, h.id DESC
       LIMIT ${s.limit} OFFSET ${offsetOf(s)}
     ) r ON true`,
    p.values,
  );
  const total = rows[0]?.total ?? 0;
  const data = rows
    .filter((r) => r.id !== null)
    .map((r) => ({ id: r.id!, conversationId: r.conversation_id, content: r.content, sentAt: iso(r.sent_at), senderType: senderTypeOf(r) }));
  return { data, pagination: pagination(s, total) };
}
