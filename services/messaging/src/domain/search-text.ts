/**
 * Search terms and highlights. The folding here mirrors the database's msg_fold (migration 004): NFC, accents
 * removed, đ/Đ → d, lower case, so "Báo giá", "BAO GIA" and "bao gia" are the same term.
 */

/** Longest search term accepted, and the most words one term may have (each is one more index condition). */
export const MAX_TERM = 200;
export const MAX_WORDS = 8;

/** One character (code point) folded: may become empty (a combining mark) or longer (ǅ → dž). */
function foldChar(ch: string): string {
  return ch
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/[đĐ]/g, 'd')
    .toLowerCase();
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

/** A LIKE pattern's literal text: %, _ and the escape character itself are matched as typed. */
export function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (m) => `\\${m}`);
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
 * text as written ("báo giá" for the term "bao gia"). A fragment that is cut starts or ends with "…".
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
  const phrase = words.join(' ');
  const needles = phrase && folded.includes(phrase) ? [phrase] : words;
  // Ranges over chars, non-overlapping, in order.
  const ranges: Array<[number, number]> = [];
  for (const needle of needles) {
    for (let at = folded.indexOf(needle); at >= 0 && needle; at = folded.indexOf(needle, at + needle.length)) {
      ranges.push([origin[at], origin[at + needle.length - 1] + 1]);
    }
  }
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
