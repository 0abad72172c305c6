import { iso, offsetOf, pagination, PageRequest, Queryable } from '@crm/db';
import { escapeLike, escapeRegex } from '../domain/search-text';
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
 * Messages of the org whose folded text holds every word (each a trigram-indexed LIKE), newest first, at most
 * `window` of them. `orgRef` is the placeholder already holding the org id. Used by both searches, so the inbox
 * list and the message search agree on what matches.
 *
 * Several words are also offered as the phrase they were typed as, OR'ed with the words: it matches nothing
 * more (a message holding the phrase holds every word), but it is what lets PostgreSQL see how common the term
 * is. It estimates the words as independent and multiplies their shares ("xuat", "hoa", "don" at 3-5% each →
 * 0.07%, where "xuat hoa don" is in 3% of the messages), then collects and sorts all 30,000 matches through the
 * trigram bitmap (400 ms) instead of walking the newest messages until `window` match (3 ms). The phrase's own
 * share is read from the column's statistics, so the estimate of the OR is at least that.
 */
export function newestMatchesSql(p: Params, orgRef: string, words: string[], window: number, extra: string[] = [], columns = 'm.conversation_id'): string {
  const indexable = words.some(hasTrigram);
  const likes = words.map((w) => wordMatch(p, w, indexable)).join(' AND ');
  const match = words.length > 1 && words.every(hasTrigram) ? `(m.search_text LIKE ${p.add(`%${escapeLike(words.join(' '))}%`)} OR (${likes}))` : likes;
  return `SELECT ${columns} FROM messages m
          WHERE m.org_id = ${orgRef} AND ${[match, ...extra].join(' AND ')}
          ORDER BY m.sent_at DESC, m.id DESC LIMIT ${Math.floor(window)}`;
}

/** pg_trgm takes no trigram from a word of one or two characters. */
const hasTrigram = (word: string) => [...word].length >= 3;

/**
 * One word as a substring of the folded text. When no word of the term has a trigram, each is tested with
 * strpos, which the trigram index does not take: as LIKEs alone they made the index read every one of its
 * entries (a full scan, 0.5 s at a million messages) before the heap was even read. Beside a word that has
 * trigrams a short word stays a LIKE: the index then skips it and narrows by the other words.
 */
function wordMatch(p: Params, word: string, indexable: boolean): string {
  return indexable ? `m.search_text LIKE ${p.add(`%${escapeLike(word)}%`)}` : `strpos(m.search_text, ${p.add(word)}) > 0`;
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
