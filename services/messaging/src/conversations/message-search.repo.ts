import { escapeLike, iso, offsetOf, pagination, PageRequest, Queryable } from '@crm/db';
import { escapeRegex, isWordStartTerm, phraseIndexConditions, SearchScope, shortWordRule, wordsAnyOrderPattern } from './search-text';
import { senderTypeOf } from './messages.repo';
import { visibleSql } from '../visibility';

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
 * substrings (LIKE, which the trigram index answers), shorter ones as whole words, or the term as a phrase
 * (search-text.ts `shortWordRule`; `scope` says which: names match words in any order, message text takes
 * a term with a short word as a phrase). Shared by the messages and the conversations' name/phone.
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
export function termMatchSql(p: Params, alias: string, words: string[], scope: SearchScope, walk = false): string {
  const text = `${alias}.search_text`;
  const short = shortWordRule(words, scope);
  // Cheap necessary conditions first (a walk over the newest messages evaluates them in this order), in the form
  // no index takes and the planner counts as nearly always true (see the phrase below): the word index decides.
  const conds = (short.prefilters ?? []).map((like) => `NULLIF(${text} LIKE ${p.add(like)}, false) IS NOT UNKNOWN`);
  conds.push(...short.substrings.map((w) => `${text} LIKE ${p.add(`%${escapeLike(w)}%`)}`));
  conds.push(...short.patterns.map((re) => `(${text} ~ ${p.add(re)}) IS TRUE`));
  if (short.phrase) conds.push(`NULLIF(${text} ~ ${p.add(short.phrase)}, false) IS NOT UNKNOWN`);
  // Walking, the words' patterns of a word-start term say it all (wordStartRule): msg_words would only cost more.
  const patternsSayAll = walk && isWordStartTerm(words, scope);
  if (short.tsquery && !patternsSayAll) conds.push(`msg_words(${text}) @@ ${p.add(short.tsquery)}::tsquery`);
  return conds.join(' AND ');
}

/**
 * Messages of the org whose folded text holds every word (termMatchSql), newest first, at most `window` of them.
 * `orgRef` is the placeholder already holding the org id. Used by both searches, so the inbox list and the
 * message search agree on what matches.
 *
 * PostgreSQL estimates the conditions of several words as independent and multiplies their shares ("xuat", "hoa",
 * "don" at 3-5% each → 0.07%, where "xuat hoa don" is in 3% of the messages), so it would collect and sort every
 * match through the indexes where walking the newest messages finds `window` of them at once. `walk` (walkNewest,
 * which counts or estimates) says which; the words' order offered as a LIKE hint used to correct the estimate, but it was a
 * trigram condition, and a name no message holds rechecked every trigram false positive through it.
 */
export function newestMatchesSql(
  p: Params,
  orgRef: string,
  words: string[],
  window: number,
  extra: string[] = [],
  columns = 'm.conversation_id',
  walk = false,
): string {
  const every = termMatchSql(p, 'm', words, 'text', walk);
  // Taken as true for nearly every row (see termMatchSql): no index is offered, the newest are walked.
  const match = walk ? `NULLIF((${every}), false) IS NOT UNKNOWN` : every;
  return `SELECT ${columns} FROM messages m
          WHERE m.org_id = ${orgRef} AND ${[match, ...extra].join(' AND ')}
          ORDER BY m.sent_at DESC, m.id DESC LIMIT ${Math.floor(window)}`;
}

/** From this many matches on, a phrase is common enough for walking the newest messages (see walkNewest). */
export const COMMON_PHRASE_MATCHES = 2000;

/**
 * Whether the newest messages should be walked for a phrase (a term with a short word, in message text) or a term
 * of several longer words (wordStartRule) rather than its matches collected through the indexes. PostgreSQL cannot
 * tell: it multiplies the shares of a phrase's pair tokens, or of the words, as if they were independent, where
 * they occur together ("em ở sài gòn": 'em~o' & 'o~sai', 3.6% each and together, estimated 0.1%), so a common
 * phrase had its 33,000 matches collected and sorted (0.5 s) where the newest 200 are found in 6,000 messages
 * (15 ms); taken the other way, a rare phrase of common pairs ("gửi em xin", none) walked every message of the org
 * (1 s). One pair alone is estimated from its own statistics, which is right, and needs nothing more.
 *
 * A phrase is counted: its matches through the indexes, up to COMMON_PHRASE_MATCHES (a rare phrase is counted in
 * full, cheaply; a common one stops early), and from that many on, the newest are walked: they hold a match at
 * least every (messages / 2,000) rows. Longer words are estimated instead (wordsEstimate), as cheaply as planning a
 * query: counted, each of the bench's common terms ("giao hang", "xuat hoa don") cost 40-110 ms on a busy machine,
 * where GIN collects every posting list in full before the count can stop, against 1-10 ms for the search itself.
 * They are walked when common in the org and, under the search's other filters, still enough to fill the `window`.
 */
export async function walkNewest(
  db: Queryable,
  orgId: string,
  words: string[],
  window: number,
  extra: (p: Params) => string[] = () => [],
): Promise<boolean> {
  if (phraseIndexConditions(words) < 2) return false;
  if (isWordStartTerm(words, 'text')) {
    // The indexes collect every match of the org whatever the other filters (a date range, an account), so those
    // decide only whether a walk would fill the window: "xuất hóa đơn" in the last 7 days (33,000 matches, 1,000 of
    // them in range) collected all 33,000 (0.8 s p99 in the bench) where walking the range takes milliseconds.
    if ((await wordsEstimate(db, orgId, words)) < COMMON_PHRASE_MATCHES) return false;
    return extra(new Params(orgId)).length === 0 || (await wordsEstimate(db, orgId, words, extra)) >= window;
  }
  const p = new Params(orgId);
  const conds = [termMatchSql(p, 'm', words, 'text'), ...extra(p)];
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM messages m WHERE m.org_id = $1 AND ${conds.join(' AND ')} LIMIT ${COMMON_PHRASE_MATCHES}) s`,
    p.values,
  );
  return rows[0].n >= COMMON_PHRASE_MATCHES;
}

/**
 * PostgreSQL's estimate of the org's messages that hold the words (with the search's other conditions), from the
 * folded text's statistics: one regular expression holding every word as the start of a word, in any order
 * (wordsAnyOrderPattern), whose share PostgreSQL reads off the column's histogram of 1,000 folded messages
 * (migration 006) by matching it, where it multiplies the shares of separate conditions. EXPLAIN plans without
 * running anything (1-3 ms on a busy machine). The pattern is never a condition of the search itself: as an index
 * condition the trigram index would take it, and as a filter it costs a regular expression on each row. Wrapped
 * here, the planner does not cost the trigram index for it either; its share is still the pattern's.
 */
export async function wordsEstimate(db: Queryable, orgId: string, words: string[], extra: (p: Params) => string[] = () => []): Promise<number> {
  const p = new Params(orgId);
  const conds = [`(m.search_text ~ ${p.add(wordsAnyOrderPattern(words))}) IS TRUE`, ...extra(p)];
  const { rows } = await db.query<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }>(
    `EXPLAIN (FORMAT JSON) SELECT 1 FROM messages m WHERE m.org_id = $1 AND ${conds.join(' AND ')}`,
    p.values,
  );
  return rows[0]['QUERY PLAN'][0].Plan['Plan Rows'];
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
  /** The reader may not see what a contact recalled (an agent): such messages are no hits, their content stays unread. */
  withholdRecalled?: boolean;
}

interface HitRow {
  id: string | null;
  conversation_id: string;
  content: string;
  sent_at: Date;
  direction: 'inbound' | 'outbound';
  sent_by_user_id: string | null;
  source: string;
  total: number;
}

/**
 * Ranked matches, best first: 4 points when the folded phrase stands as whole words, 2 when the term occurs as
 * typed (accents included, case ignored), 1 when the folded phrase occurs at all (every word is required
 * anyway); then newest first. The count and the page come from one pass over the window (a page past the end
 * still gets the total).
 */
/** The search's filters besides the term, as conditions on `m` (the org is $1). */
function filterConds(p: Params, s: MessageSearch): string[] {
  const extra: string[] = [];
  if (s.conversationId) extra.push(`m.conversation_id = ${p.add(s.conversationId)}`);
  if (s.chatnetAccountId) extra.push(`m.chatnet_account_id = ${p.add(s.chatnetAccountId)}`);
  if (s.from) extra.push(`m.sent_at >= ${p.add(s.from)}`);
  if (s.to) extra.push(`m.sent_at < ${p.add(s.to)}`);
  // Inside the window's query, so an agent's window holds the newest matches they may see.
  if (s.viewer)
    extra.push(`EXISTS (SELECT 1 FROM conversations c WHERE c.id = m.conversation_id AND c.org_id = $1 AND ${visibleSql(p.add(s.viewer))})`);
  if (s.withholdRecalled) extra.push(`m.recalled_by IS DISTINCT FROM 'contact'`);
  return extra;
}

export async function search(db: Queryable, orgId: string, s: MessageSearch) {
  const walk = await walkNewest(db, orgId, s.words, s.window, (q) => filterConds(q, s));
  const p = new Params(orgId);
  const extra = filterConds(p, s);
  const hits = newestMatchesSql(
    p,
    '$1',
    s.words,
    s.window,
    extra,
    'm.id, m.conversation_id, m.content, m.search_text, m.sent_at, m.direction, m.sent_by_user_id, m.source',
    walk,
  );
  const phrase = s.words.join(' ');
  // A boundary is required only where the phrase itself starts or ends with a word character ("#a10" has none before).
  const wholeWords = `${/^\w/.test(phrase) ? '(^|\\W)' : ''}${escapeRegex(phrase)}${/\w$/.test(phrase) ? '(\\W|$)' : ''}`;
  const rank = `(CASE WHEN h.search_text ~ ${p.add(wholeWords)} THEN 4 ELSE 0 END
                + CASE WHEN strpos(lower(normalize(h.content, NFC)), ${p.add(s.typed)}) > 0 THEN 2 ELSE 0 END
                + CASE WHEN strpos(h.search_text, ${p.add(phrase)}) > 0 THEN 1 ELSE 0 END)`;
  const { rows } = await db.query<HitRow>(
    `WITH hits AS (${hits})
     SELECT r.id, r.conversation_id, r.content, r.sent_at, r.direction, r.sent_by_user_id, r.source, t.total
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
