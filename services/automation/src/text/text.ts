/**
 * Text helpers shared by templates, conditions and keyword triggers: `{{variable}}` placeholders and
 * Vietnamese-aware matching (a keyword typed without diacritics matches text typed with them).
 */

/** `{{ name }}`, `{{contact.phone}}`, `{{steps.0.body.id}}`: an identifier with optional dotted parts (digits allowed after the first), spaces allowed inside the braces. */
const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*\}\}/g;
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*$/;

/** The distinct variables a text uses, in order of first appearance. */
export function placeholdersOf(text: string): string[] {
  const seen = new Set<string>();
  for (const m of text.matchAll(PLACEHOLDER)) seen.add(m[1]);
  return [...seen];
}

export type Lookup = (name: string) => string | undefined;

/** Replace every placeholder with its value; an unknown variable renders as an empty string. */
export function render(text: string, lookup: Lookup): string {
  return text.replace(PLACEHOLDER, (_m, name: string) => lookup(name) ?? '');
}

/**
 * Lower-case and strip diacritics: "Báo GIÁ" → "bao gia". `đ` is a separate letter in Unicode, not d plus a
 * mark, so it is mapped by hand.
 */
export function fold(text: string): string {
  return text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[đĐ]/g, 'd')
    .toLowerCase();
}

/** Lower-case in composed form, diacritics kept: "BÁO giá" → "báo giá". */
function lower(text: string): string {
  return text.normalize('NFC').toLowerCase();
}

function hasDiacritics(text: string): boolean {
  return fold(text) !== lower(text);
}

function words(text: string): string[] {
  return text.split(/[^\p{L}\p{N}]+/u).filter(Boolean);
}

function containsSequence(haystack: string[], needle: string[]): boolean {
  if (needle.length === 0 || needle.length > haystack.length) return false;
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/**
 * Does `text` contain `phrase` as whole words, ignoring case? A phrase written without diacritics matches
 * any accenting ("bao gia" matches "Báo giá"); one written with diacritics matches only those ("giá" does
 * not match "già", which is a different word). Whole words, so "hi" does not match "this".
 */
export function containsPhrase(text: string, phrase: string): boolean {
  if (hasDiacritics(phrase)) return containsSequence(words(lower(text)), words(lower(phrase)));
  return containsSequence(words(fold(text)), words(fold(phrase)));
}

/** Substring match with the same diacritics rule as containsPhrase, for the `contains` operator. */
export function containsText(text: string, part: string): boolean {
  if (hasDiacritics(part)) return lower(text).includes(lower(part));
  return fold(text).includes(fold(part));
}

/** Case-insensitive equality of two strings (diacritics matter: "Hà" ≠ "Ha"). */
export function sameText(a: string, b: string): boolean {
  return lower(a.trim()) === lower(b.trim());
}
