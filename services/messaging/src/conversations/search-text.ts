import { messagingRules } from '@crm/validation';
import { escapeLike } from '@crm/db';

/**
 * Search terms and highlights. The folding here mirrors the database's msg_fold (migration 004): NFC, accents
 * removed, đ/Đ → d, lower case, so "Báo giá", "BAO GIA" and "bao gia" are the same term.
 */

/** Longest search term accepted, and the most words one term may have (each is one more index condition). */
export const MAX_TERM = messagingRules.SEARCH_TERM_MAX;
export const MAX_WORDS = 8;

/** One character (code point) folded: may become empty (a combining mark) or longer (ǅ → dž). */
function foldChar(ch: string): string {
  return ch.normalize('NFD').replace(/\p{M}/gu, '').replace(/[đĐ]/g, 'd').toLowerCase();
}

export function fold(text: string): string {
  let out = '';
  for (const ch of text.normalize('NFC')) out += foldChar(ch);
  return out;
}

/** The folded words of a term, in order; empty for a blank term. */
export function wordsOf(term: string): string[] {
  return fold(term).split(/\s+/).filter(Boolean);
}

/**
 * A word of one or two characters has no trigram (pg_trgm pads each word and needs three characters), so the
 * trigram index cannot find it as a substring: short words are matched as whole words through the word index
 * (msg_words, migration 010), the term's last word as the start of a word (it may still be being typed).
 */
export function isShortWord(word: string): boolean {
  return [...word].length < 3;
}

/**
 * What the word index calls a word: a run of letters and digits (msg_words splits the text at everything else).
 * The same class as the database's [[:alnum:]] for every letter and digit people type; only rarer numerals (², ½)
 * may differ.
 */
const WORD_CHAR = /[\p{L}\p{Nd}]/u;
const WORD_RUN = /[\p{L}\p{Nd}]+/gu;
const WHOLE_RUN = /^[\p{L}\p{Nd}]+$/u;
/** A regular expression (PostgreSQL ARE) for "not a word character". */
const NON_WORD = '[^[:alnum:]]';

const startsWithWordChar = (w: string) => WORD_CHAR.test([...w][0] ?? '');
const endsWithWordChar = (w: string) => WORD_CHAR.test([...w].at(-1) ?? '');

export interface ShortWordRule {
  /**
   * A tsquery for the word index (msg_words, migrations 010 and 011), its lexemes quoted; undefined when it has
   * nothing to narrow by. Words matched anywhere: the letters and digits of each short word, ANDed, the last one as
   * a prefix (for a short word made only of letters and digits its token is the rule itself, so it needs no pattern
   * besides). A phrase: each two adjacent words of which one is short as a pair token ('le~an':*, see `PAIR`).
   */
  tsquery?: string;
  /** PostgreSQL regular expressions over the folded text for what the tsquery cannot say; a match satisfies each. */
  patterns: string[];
  /**
   * For a phrase, its regular expression (its words in order, next to each other, the last one open unless the
   * rule closes it): the rule itself, which the pair tokens already say in part. Checked on each row the tsquery
   * finds, and first on each row when PostgreSQL walks the newest messages, where it is cheaper than computing
   * msg_words; the planner must not count it a second time (see termMatchSql).
   */
  phrase?: string;
  /**
   * The words of three characters or more that still need their substring condition (trigram LIKE): all of them
   * when words match anywhere; in a phrase with a pair, only those with a digit that are in no pair (phraseRule).
   */
  substrings: string[];
  /**
   * LIKE patterns every match holds (wordStartRule: each word as a substring), checked first on each row and never
   * offered to an index: when PostgreSQL walks the newest messages they turn most rows away for a fraction of
   * msg_words' cost, where the trigram index would bring back the false positives the word index is there to avoid.
   */
  prefilters?: string[];
}

/**
 * What joins two adjacent words into one token of the word index ("le an" → "le~an"): a character that is not a
 * letter or digit, so it never occurs inside a word. Must be the one msg_words uses.
 */
export const PAIR = '~';

/**
 * A tsquery operand for one lexeme, quoted (a backslash before any quote or backslash), `:*` for a prefix: whatever
 * the lexeme holds, it stays one operand and adds no operator. Lexemes are made of the letters and digits of the
 * term and `PAIR`, so there is nothing to escape today; the quoting is what keeps user input from ever becoming
 * tsquery syntax.
 */
export function tsqueryOperand(lexeme: string, prefix: boolean): string {
  return `'${lexeme.replace(/['\\]/g, '\\$&')}'${prefix ? ':*' : ''}`;
}

/** A one-letter prefix ("lê a" as words): matches nearly every message, see shortWordRule. */
const ONE_LETTER = /^.$/u;

/**
 * Where a term is looked for. `names`: a contact's name and phone, where words match in any order ("Nguyen An"
 * finds "Nguyễn Văn An"); only a term of short words only is a phrase. `text`: message content, where a term
 * holding any short word is a phrase (below).
 */
export type SearchScope = 'names' | 'text';

/**
 * How the short words of a term (folded words, in order) must occur. Each stands as a whole word: no letter or
 * digit touches it (a boundary is only required where the word itself starts or ends with one, so "a." needs
 * none after it); the term's last word only needs the boundary before it. A word without any letter or digit
 * ("%%") is matched as the substring it is, and gives the word index nothing to narrow by.
 *
 * A phrase must occur as typed: its words in order, separated by nothing but spaces and punctuation ("lê an"
 * finds "gặp Lê An nhé" and "lê, anh", not "ole and" nor "an lê"). In message text every term with a short word
 * is one: a word of one or two letters means little apart from its neighbour ("Hồ Uyên" is a name; "hồ" in "ủng
 * hộ" and "uyên" in "chuyển khoản" anywhere in a message are not it), and as a set of words such a term matched
 * 15,000 of a million messages, every one read from the table (about a second).
 *
 * A pattern is only added where the tsquery does not already say it all (a token left out, punctuation):
 * PostgreSQL takes conditions as independent and multiplies their shares, so the same fact said twice ("da" as a
 * tsquery and as a pattern, 19% each) made "Đà Nẵng" look five times rarer than it is and its 33,000 matches
 * were collected through the indexes instead of walking the newest messages.
 */
export function shortWordRule(words: string[], scope: SearchScope = 'names'): ShortWordRule {
  if (isWordStartTerm(words, scope)) return wordStartRule(words);
  const phrase = words.length > 1 && (scope === 'text' ? words.some(isShortWord) : words.every(isShortWord));
  return phrase ? phraseRule(words) : wordsRule(words);
}

/**
 * In message text, a term of several words none of which is short: each word is looked for as a word, the last as
 * the start of one (wordStartRule), rather than anywhere inside one. A single word, and names and phones, keep the
 * substring.
 */
export function isWordStartTerm(words: string[], scope: SearchScope): boolean {
  return scope === 'text' && words.length > 1 && !words.some(isShortWord);
}

const isLastOf = (words: string[], i: number) => i === words.length - 1;
/** Whether the word is matched as the start of a word: the term's last one, when it ends with a letter or digit. */
const isOpen = (words: string[], i: number) => isLastOf(words, i) && endsWithWordChar(words[i]);
const before = (w: string) => (startsWithWordChar(w) ? `(^|${NON_WORD})` : '');

/**
 * Beside longer words, each short word on its own (the longer words are substrings, anywhere: "hansen ol" finds
 * "Ole Hansen"), so a short word is a token of its own.
 */
function wordsRule(words: string[]): ShortWordRule {
  const after = (w: string, i: number) => (endsWithWordChar(w) && !isLastOf(words, i) ? `(${NON_WORD}|$)` : '');
  const tokens: Array<{ at: number; run: string; query: string }> = [];
  words.forEach((w, i) => {
    if (!isShortWord(w)) return;
    const run = w.match(WORD_RUN)?.[0];
    if (run) tokens.push({ at: i, run, query: tsqueryOperand(run, isOpen(words, i)) });
  });
  // A one-letter prefix ("mai a") matches nearly every message, and GIN collects all of a prefix's matches before
  // intersecting: it narrows nothing and costs the most. Kept only when it is all there is to go by.
  const hasOther = words.some((w) => !isShortWord(w)) || tokens.length > 1;
  const useful = tokens.filter((t) => !(hasOther && ONE_LETTER.test(t.run) && isOpen(words, t.at)));
  const said = new Set(useful.map((t) => t.at));
  const saidInFull = (w: string, i: number) => said.has(i) && WHOLE_RUN.test(w);
  const patterns = words.flatMap((w, i) => (isShortWord(w) && !saidInFull(w, i) ? [`${before(w)}${escapeRegex(w)}${after(w, i)}`] : []));
  return { tsquery: useful.length ? useful.map((t) => t.query).join(' & ') : undefined, patterns, substrings: words.filter((w) => !isShortWord(w)) };
}

/** A token as msg_words cuts a word: its first three characters. */
const cut = (run: string) => [...run].slice(0, 3).join('');

/**
 * A phrase goes through pair tokens: msg_words has one for each two adjacent words of which one has one or two
 * characters (each cut to three), so "lê an" is 'le~an':* (the second word open), "a b c" 'a~b' & 'b~c':*,
 * "hồ uyên" 'ho~uye', "hoàng vy" 'hoa~vy'. Two words next to each other in the text are one short posting list,
 * where the words alone were two long ones intersected (a prefix such as 'ha':* collected 418,000 messages) and
 * their order and adjacency a regular expression on each message holding both ("hồ hà": 10,000 rechecked,
 * 0.2-0.3 s; now 1 ms). The pair is exact for two words of letters and digits; for three words or more (a~b and
 * b~c may be apart), longer words (only their first three characters are in the token) and punctuation typed in a
 * word the phrase's regular expression decides, on the few rows the pairs leave.
 *
 * Two consecutive words of the term with a letter or digit each make a pair whatever else they hold: the phrase
 * allows only punctuation and spaces between two words, so the last run of letters and digits of the one and the
 * first of the other are adjacent words of the text, and the text's word equals the typed run wherever the typed
 * word goes on or the phrase bounds it. A word without any ("%%") breaks the chain: its neighbours are looked for
 * on their own.
 *
 * The last word is open (the start of a word) except a short last word after a longer one: the index pairs a
 * longer word only with a short one (a word here: a run of letters and digits), so "hoàng v" could not find "Hoàng Việt" through a pair, and the word alone
 * ('v':*) is the posting list the pair is there to avoid. Such a word is whole ("hoàng v" finds "hoàng v.", not
 * "Hoàng Vy").
 */
function phraseRule(words: string[]): ShortWordRule {
  const last = words.length - 1;
  const runsOf = (w: string) => w.match(WORD_RUN) ?? [];
  // The index pairs the last word with the run before it only where one of them is short.
  const closesLast = isShortWord(words[last]) && last > 0 && [...(runsOf(words[last - 1]).at(-1) ?? '')].length >= 3;
  const open = isOpen(words, last) && !closesLast;

  const pairs: Array<{ token: string; prefix: boolean }> = [];
  const paired = new Set<number>();
  for (let i = 0; i < last; i++) {
    if (!isShortWord(words[i]) && !isShortWord(words[i + 1])) continue;
    const a = runsOf(words[i]).at(-1);
    const nextRuns = runsOf(words[i + 1]);
    const b = nextRuns[0];
    if (!a || !b) continue;
    // Open only where the typed run may be the start of a longer word: the term's last run, shorter than the cut.
    const prefix = open && i + 1 === last && nextRuns.length === 1 && [...b].length < 3;
    pairs.push({ token: `${cut(a)}${PAIR}${cut(b)}`, prefix });
    paired.add(i).add(i + 1);
  }
  const operands = pairs.map((x) => tsqueryOperand(x.token, x.prefix));
  const alone = words.flatMap((w, i) => {
    const run = isShortWord(w) && !paired.has(i) ? runsOf(w)[0] : undefined;
    return run ? [{ run, open: open && i === last }] : [];
  });
  // As in wordsRule: a lone one-letter prefix only when nothing else narrows.
  const useful = alone.filter(
    (t) => !(t.open && ONE_LETTER.test(t.run) && (operands.length > 0 || alone.length > 1 || words.some((w) => !isShortWord(w)))),
  );
  operands.push(...useful.map((t) => tsqueryOperand(t.run, t.open)));

  // The phrase; it ends with the term's last word, open or whole.
  let re = `${before(words[0])}${escapeRegex(words[0])}`;
  for (let i = 1; i < words.length; i++) {
    // Two word characters meeting need something between them; otherwise the words' own punctuation may be all.
    const gap = endsWithWordChar(words[i - 1]) && startsWithWordChar(words[i]) ? '+' : '*';
    re += `${NON_WORD}${gap}${escapeRegex(words[i])}`;
  }
  if (closesLast && endsWithWordChar(words[last])) re += `(${NON_WORD}|$)`;
  const tsquery = operands.length ? operands.join(' & ') : undefined;
  // The phrase says every longer word; a substring condition would only add what the trigram index narrows by,
  // and PostgreSQL trusts it too far: "hoàng" is estimated at 27 messages, so the trigram index alone was taken and
  // its 36,000 false positives ("hoa", "oan", "ang" in other words) rechecked, where the pair 'hoa~vy' finds none.
  // Kept for a word with a digit in no pair (a product code, an order number): rare, and what finds it.
  const substrings = words.filter((w, i) => !isShortWord(w) && (!paired.size || (!paired.has(i) && /\p{Nd}/u.test(w))));
  // Without a pair the tsquery says nothing of the phrase: the pattern is a condition of its own, counted as such.
  return paired.size ? { tsquery, patterns: [], phrase: re, substrings } : { tsquery, patterns: [re], substrings };
}

/** The longest whole-word token msg_words keeps (migration 016): a longer word is kept cut to this many characters. */
export const WHOLE_TOKEN = 32;

/**
 * The word index's operand for one run of letters and digits of a term that must be a word of the text (`open`: or
 * the start of one): the posting list that narrows best, at least every message holding the run so; the term's
 * regular expressions decide the rest (wordStartRule). msg_words keeps every word's first three characters, and a
 * word of four or more whole (cut at WHOLE_TOKEN), so:
 *   - two characters or fewer: the word itself, as a prefix when open (the short-word token);
 *   - three characters: the first-three token (every word starting with them);
 *   - four to WHOLE_TOKEN, whole: the whole-word token. A first-three token has three characters and a pair "~" as
 *     its fourth, so four letters or digits never find either;
 *   - four or more, open: the first-three token when the run is all letters; a prefix of the whole-word tokens
 *     ('sp1270':*) when it has a digit. GIN collects every posting list a prefix matches into one bitmap before it
 *     intersects anything, where it merges exact tokens as it goes, skipping what the others lack: on a million
 *     messages 'hang':* read 150,000 postings (48 ms on a busy machine) to find that "oan hang" has no match,
 *     'oan' & 'han' next to none. A word of letters starts like common words; a code with a digit is rare, and its
 *     first three characters ('sp1') are in thousands of messages its prefix is not;
 *   - longer than WHOLE_TOKEN: the cut, as a prefix.
 * A one-letter prefix is flagged: the caller leaves it out when anything else narrows (it is nearly every message).
 */
function wordStartOperand(run: string, open: boolean): { query: string; oneLetter: boolean } {
  const chars = [...run];
  const n = chars.length;
  if (n > WHOLE_TOKEN) return { query: tsqueryOperand(chars.slice(0, WHOLE_TOKEN).join(''), true), oneLetter: false };
  if (n === 3 || (n > 3 && open && !/\p{Nd}/u.test(run))) return { query: tsqueryOperand(cut(run), false), oneLetter: false };
  return { query: tsqueryOperand(run, open), oneLetter: open && n === 1 };
}

/**
 * Several words of three characters or more, in message text: each a word of the text, the last one as the start of
 * a word (it may still be being typed), in any order ("bao gia" finds "giá này bao nhiêu" and "bao giặt", not
 * "hoàn … hàng" for "hoàng"), as short words are beside longer ones (wordsRule) and in a phrase. Matched as
 * substrings anywhere, such a term was answered by the trigram index, whose false positives (a longer word's
 * trigrams found apart, in other words) were each read and rechecked: a name no message holds ("Hoàng Hoa") cost
 * 36,000 rows. Through the word index each word is a posting list of its own (wordStartOperand; "hoang" a whole
 * word, none), and no word but the last is a prefix (on a million messages "chuyen" & "khoan" took half the time
 * of 'chuyen':* & 'khoan':*). A word with punctuation ("sp-12", "a.b") gives each of its runs (whole words of the
 * text, but the very last, which may go on).
 *
 * Each word is also a regular expression, the rule itself: checked on the few rows the tsquery finds where the
 * operand says more than the word, and, when PostgreSQL walks the newest messages, instead of the tsquery (a few
 * µs a row against msg_words' 10-20; see termMatchSql), after the word's LIKE (`prefilters`) turned most rows away.
 * The ranking still prefers the words next to each other (message-search.repo.ts search).
 */
function wordStartRule(words: string[]): ShortWordRule {
  const operands = words.flatMap((w, i) => {
    const runs = w.match(WORD_RUN) ?? [];
    return runs.map((run, j) => wordStartOperand(run, isOpen(words, i) && j === runs.length - 1));
  });
  // As in wordsRule: a one-letter prefix only when nothing else narrows.
  const useful = operands.filter((o) => !(o.oneLetter && operands.some((x) => !x.oneLetter)));
  const after = (w: string, i: number) => (endsWithWordChar(w) && !isLastOf(words, i) ? `(${NON_WORD}|$)` : '');
  return {
    tsquery: useful.length ? useful.map((o) => o.query).join(' & ') : undefined,
    patterns: words.map((w, i) => `${before(w)}${escapeRegex(w)}${after(w, i)}`),
    substrings: [],
    prefilters: words.map((w) => `%${escapeLike(w)}%`),
  };
}

/**
 * A regular expression over the folded text for a text holding each word of the term where a word starts, in any
 * order (one lookahead each): for PostgreSQL to estimate how common the term is (message-search.repo.ts
 * wordsEstimate).
 */
export function wordsAnyOrderPattern(words: string[]): string {
  return `^${words.map((w) => `(?=.*${before(w)}${escapeRegex(w)})`).join('')}`;
}

/**
 * How many conditions the indexes are asked for when message text is searched for the term as a phrase (pairs of
 * the word index, substrings of the trigram index) or as the starts of words (wordStartRule); 0 otherwise (a
 * single word, whose estimate is its own). See message-search.repo.ts walkNewest for why several matter.
 */
export function phraseIndexConditions(words: string[]): number {
  const rule = shortWordRule(words, 'text');
  if (rule.phrase === undefined && !isWordStartTerm(words, 'text')) return 0;
  return (rule.tsquery ? rule.tsquery.split(' & ').length : 0) + rule.substrings.length;
}

/**
 * Whether a short word matched at [at, at + length) of the folded text stands as the rule above wants it: no word
 * character just before it (when it starts with one) nor, unless it may be a prefix, just after it.
 */
export function standsAsWord(folded: string, at: number, needle: string, prefix: boolean): boolean {
  const prev = [...folded.slice(Math.max(0, at - 2), at)].at(-1) ?? '';
  const next = [...folded.slice(at + needle.length, at + needle.length + 2)][0] ?? '';
  if (startsWithWordChar(needle) && WORD_CHAR.test(prev)) return false;
  if (!prefix && endsWithWordChar(needle) && WORD_CHAR.test(next)) return false;
  return true;
}

/** A literal for a PostgreSQL (ARE) regular expression. */
export function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const PHONE_CHARS = /^\+?[0-9\s().\-/]+$/;

/**
 * The digits to look for in stored phone numbers when a term looks like one (only digits and phone
 * punctuation, at least 3 digits). Numbers are stored as crm normalised them (E.164: +84912345678), so a
 * national spelling (0912 345 678) is matched by its digits without the leading zeros. Undefined otherwise.
 */
export function phoneDigits(term: string): string | undefined {
  const t = term.trim();
  if (!PHONE_CHARS.test(t)) return undefined;
  const digits = t.replace(/\D/g, '').replace(/^0+/, '');
  return digits.length >= 3 ? digits : undefined;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

/** Characters of context kept on each side of the first match in a highlight. */
const CONTEXT = 60;

/**
 * The fragment of `content` around the first match of the term, HTML-escaped, with every match wrapped in
 * <mark>…</mark>: the whole phrase where it occurs, else each of its words. Matching is done on the folded
 * text, and each folded character remembers the original character it came from, so the marks fall on the
 * text as written ("báo giá" for the term "bao gia"). A word of one or two letters, and any word of a term of
 * several, is marked only where it stands as the search takes it (whole word, the last one as a word's start). A
 * fragment that is cut starts or
 * ends with "…".
 */
export function highlight(content: string, term: string): string {
  const text = content.normalize('NFC');
  const chars = [...text];
  let folded = '';
  const origin: number[] = []; // folded UTF-16 index → index into chars
  chars.forEach((ch, i) => {
    const f = foldChar(ch);
    for (let k = 0; k < f.length; k++) origin.push(i);
    folded += f;
  });
  origin.push(chars.length);

  const words = wordsOf(term);
  // Where a needle occurs in the folded text; a short word only where the search would take it (standsAsWord).
  const find = (needle: string, short: boolean, prefix: boolean) => {
    const found: Array<[number, number]> = [];
    for (let at = folded.indexOf(needle); at >= 0 && needle; at = folded.indexOf(needle, at + needle.length)) {
      if (!short || standsAsWord(folded, at, needle, prefix)) found.push([origin[at], origin[at + needle.length - 1] + 1]);
    }
    return found;
  };
  // In a term of several words every word is looked for as a word, the last as the start of one (wordStartRule,
  // phraseRule); a single longer word anywhere.
  const several = words.length > 1;
  // The phrase ends with the term's last word, so only its start can need a boundary.
  const phrase = words.length ? find(words.join(' '), several || isShortWord(words[0]), true) : [];
  // Ranges over chars, non-overlapping, in order.
  const ranges = phrase.length ? phrase : words.flatMap((w, i) => find(w, several || isShortWord(w), i === words.length - 1));
  ranges.sort((x, y) => x[0] - y[0]);
  const merged: Array<[number, number]> = [];
  for (const r of ranges) {
    const last = merged[merged.length - 1];
    if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
    else merged.push([...r]);
  }

  const first = merged[0]?.[0] ?? 0;
  const start = Math.max(0, first - CONTEXT);
  const end = Math.min(chars.length, (merged[0]?.[1] ?? 0) + CONTEXT * 2);
  let out = start > 0 ? '…' : '';
  let pos = start;
  for (const [a, b] of merged) {
    if (b <= start || a >= end) continue;
    const from = Math.max(a, start);
    const to = Math.min(b, end);
    out += escapeHtml(chars.slice(pos, from).join('')) + '<mark>' + escapeHtml(chars.slice(from, to).join('')) + '</mark>';
    pos = to;
  }
  out += escapeHtml(chars.slice(pos, end).join(''));
  return end < chars.length ? `${out}…` : out;
}
