import { detectLanguage, foldKey, Language, words } from '../local/text';

/**
 * The words a search or a customer's message is compared on: folded (lower case, no diacritics, đ → d), so
 * "bảo hành" and "bao hanh" are one term, with a plural "s" dropped (English "blenders" finds "blender";
 * Vietnamese syllables never end in s). Vietnamese meaning sits in syllable pairs ("bảo hành", "giao hàng"),
 * so a customer's question is also compared on the pairs of adjacent words it contains.
 */
export function stem(word: string): string {
  return word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word;
}

/** Every word of a text as compared: folded and stemmed, in order. */
export function foldedWords(text: string): string[] {
  return words(text).map((w) => stem(foldKey(w)));
}

// Words that carry no topic, per language: the summary's STOP_WORDS mixes both, and folded English stop words are
// Vietnamese content words ("may" is "máy", machine; "do" is "đồ"/"đỏ"; "an" is "ăn"), so each language has its own.
// Both lists hold the words that only make a message a question or a request ("cho hỏi", "muốn biết", "tell me").
const STOP: Record<Language, Set<string>> = {
  vi: new Set(
    [
      'va la cua co khong duoc cho minh ban shop em anh chi a nhe nha voi gi sao roi chua nay kia thi ma cac nhung mot',
      'hay lam qua vay dang se da oi ak ko k j de o tai vi nen neu khi nao ai dau the nhu bi boi tu ha ho ta toi chung',
      'ben day ra vao len xuong nua cung deu van con rat hon nhat moi xin chao cam on hoi muon biet ad admin nhi',
    ]
      .join(' ')
      .split(' '),
  ),
  en: new Set(
    [
      'a an the and or but if then so of to in on at by for with from as is are was were be been being am do does did have has had',
      'i me my mine we us our you your yours he him his she her they them their it its this that these those there here',
      'what which who whom when where why how can could would should will shall may might must not no yes ok okay',
      'please thanks thank hi hello hey dear just also very really too much many more some any all about into over than',
      'tell know want need like get let',
    ]
      .join(' ')
      .split(' '),
  ),
};

export interface QueryTerms {
  /** Content words, without repeats, in order. */
  words: string[];
  /** Adjacent content-word pairs ("bao hanh"), without repeats. */
  pairs: string[];
}

/** What a customer's message asks about, for retrieval: stop words and question words left out. */
export function queryTerms(text: string, max = 16): QueryTerms {
  const all = foldedWords(text);
  const stop = STOP[detectLanguage(text)];
  const keep = (w: string) => w.length > 1 && !stop.has(w);
  const wordsOut: string[] = [];
  const pairs: string[] = [];
  for (let i = 0; i < all.length; i++) {
    if (!keep(all[i])) continue;
    if (!wordsOut.includes(all[i])) wordsOut.push(all[i]);
    if (i + 1 < all.length && keep(all[i + 1])) {
      const pair = `${all[i]} ${all[i + 1]}`;
      if (!pairs.includes(pair)) pairs.push(pair);
    }
  }
  return { words: wordsOut.slice(0, max), pairs: pairs.slice(0, max) };
}

/** Lexemes safe inside a tsquery: letters and digits only (folded words are), quoted. */
export const lexeme = (w: string) => `'${w}'`;

/** A tsquery matching any of the words (as prefixes: "blender" finds "blenders"), or undefined when none. */
export function anyOf(terms: string[]): string | undefined {
  const ok = terms.filter((w) => /^[\p{L}\p{N}]+$/u.test(w));
  return ok.length ? ok.map((w) => `${lexeme(w)}:*`).join(' | ') : undefined;
}

/**
 * A tsquery matching every word of a search box, or undefined when none. The stored text is folded but not
 * stemmed, so a stemmed word ("blenders" → "blender") and the last word (still being typed) match as prefixes.
 */
export function allOf(text: string, max = 10): string | undefined {
  const raw = words(text)
    .map((w) => foldKey(w))
    .filter((w) => /^[\p{L}\p{N}]+$/u.test(w))
    .slice(0, max);
  return raw.length ? raw.map((w, i) => (i === raw.length - 1 || stem(w) !== w ? `${lexeme(stem(w))}:*` : lexeme(w))).join(' & ') : undefined;
}
