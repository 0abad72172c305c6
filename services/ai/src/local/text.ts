/**
 * Text helpers shared by the local engine. Vietnamese is written with diacritics, but customers often
 * type without them ("cam on" for "cảm ơn"), so matching works on both the accented and the folded form.
 */

export type Language = 'vi' | 'en';

const VI_LETTERS = /[ăâđêôơưáàảãạấầẩẫậắằẳẵặéèẻẽẹếềểễệíìỉĩịóòỏõọốồổỗộớờởỡợúùủũụứừửữựýỳỷỹỵ]/giu;

export function normalize(text: string): string {
  return text.normalize('NFC').toLowerCase();
}

/** Remove Vietnamese diacritics: "cảm ơn" → "cam on", "đ" → "d". */
export function fold(text: string): string {
  return text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/đ/g, 'd')
    .replace(/Đ/g, 'D')
    .normalize('NFC');
}

export function hasDiacritics(word: string): boolean {
  return fold(word) !== word;
}

/** The key every word is compared on when accents are missing: lower case, then folded ("Thất" → "that"). */
export function foldKey(text: string): string {
  return fold(normalize(text));
}

// Tone marks (grave, acute, tilde, hook above, dot below); the other marks (circumflex, breve, horn) shape the vowel.
const TONE_MARKS = /[\u0300\u0301\u0303\u0309\u0323]/g;

/**
 * One spelling per accented word, whichever vowel the keyboard put the tone on ("hoà" and "hòa",
 * "thuý" and "thúy" are the same word): the tone mark moves to the end of the word. Only a comparison key.
 */
export function canonical(word: string): string {
  const d = word.normalize('NFD').toLowerCase();
  const tones = d.match(TONE_MARKS);
  return tones ? (d.replace(TONE_MARKS, '') + tones.join('')).normalize('NFC') : d.normalize('NFC');
}

// Frequent words of each language, in folded form: they decide the language of unaccented text.
// Vietnamese typed without accents shows up through these, so the list also holds frequent shop-chat
// words that are not English ("toi", "hang", "giao"); "that", "do", "me" stay out: they are English too.
const VI_FUNCTION = new Set(
  [
    'khong co duoc cho minh ban shop em anh chi a nhe nha voi la gi sao bao nhieu roi chua nay kia thi ma cua cac nhung mot va hay lam qua vay dang se da oi ak ko k j',
    'toi hang giao rat nhan don san pham tien gia ve lai nua luon muon cung con het nhu mua dung biet hoi xin dat khach vien dich vu',
  ]
    .join(' ')
    .split(' '),
);
// "a", "an", "do", "me", "to" are left out: typed without accents they are also Vietnamese (ạ, ăn, đồ, mẹ, to).
const EN_FUNCTION = new Set(
  'the is are was were you i and of for my your can does did what how when where why it this that with have has be will would please thanks thank hi hello we our not'.split(
    ' ',
  ),
);

/** Vietnamese when the text carries Vietnamese letters or its function words outnumber English ones. */
export function detectLanguage(text: string): Language {
  const t = normalize(text);
  const letters = (t.match(/\p{L}/gu) ?? []).length;
  const vi = (t.match(VI_LETTERS) ?? []).length;
  if (vi >= 2 || (letters > 0 && vi / letters > 0.03)) return 'vi';
  let viWords = 0;
  let enWords = 0;
  for (const w of words(t)) {
    const f = fold(w);
    if (VI_FUNCTION.has(f)) viWords++;
    if (EN_FUNCTION.has(w)) enWords++;
  }
  return viWords > enWords ? 'vi' : 'en';
}

export type Token = { text: string; kind: 'word' | 'emoji' | 'punct' };

// Emoticons first (":)" would otherwise split into punctuation), then words (letters, marks, digits,
// inner apostrophes as in "don't"), pictographic emoji, and punctuation that ends a clause.
const TOKEN = /(<3|[:;=]-?[()dDpP]|[:;]'\()|([\p{L}\p{M}\p{N}]+(?:['’][\p{L}]+)*)|(\p{Extended_Pictographic})|([.!?…,;:]+)/gu;

export function tokenize(text: string): Token[] {
  const out: Token[] = [];
  for (const m of normalize(text).matchAll(TOKEN)) {
    if (m[1]) out.push({ text: m[1], kind: 'emoji' });
    else if (m[2]) out.push({ text: m[2].replace(/’/g, "'"), kind: 'word' });
    else if (m[3]) out.push({ text: m[3], kind: 'emoji' });
    else if (m[4]) out.push({ text: m[4], kind: 'punct' });
  }
  return out;
}

export function words(text: string): string[] {
  return tokenize(text)
    .filter((t) => t.kind === 'word')
    .map((t) => t.text);
}

/**
 * Sentences of a message: split after . ! ? … followed by a space (so 1.500.000 and 3.5 stay whole) and
 * at line breaks. Chat messages are short and loosely punctuated; a line is a sentence.
 */
export function sentences(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split(/\r?\n+/)) {
    const parts = line.split(/(?<=[.!?…])\s+/u);
    for (const p of parts) {
      const s = p.trim();
      if (s) out.push(s);
    }
  }
  return out;
}

export function truncate(text: string, max: number): string {
  const t = text.replace(/\s+/g, ' ').trim();
  if (t.length <= max) return t;
  const cut = t.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).replace(/[\s,;:.-]+$/u, '')}…`;
}

// Stop words (folded forms): ignored when scoring sentences for a summary.
export const STOP_WORDS = new Set(
  [
    // English
    'a an the and or but if then so of to in on at by for with from as is are was were be been being am do does did have has had',
    'i me my mine we us our you your yours he him his she her they them their it its this that these those there here',
    'what which who whom when where why how can could would should will shall may might must not no yes ok okay',
    'please thanks thank hi hello hey dear just also very really too much many more some any all about into over than',
    // Vietnamese (folded)
    'va la cua co khong duoc cho minh ban shop em anh chi a nhe nha voi gi sao roi chua nay kia thi ma cac nhung mot',
    'hay lam qua vay dang se da oi ak ko k j de o tai thi vi nen nhung neu khi nao ai dau the nhu the bi boi tu',
    'ha ho ta toi chung chung toi ben day do day kia ra vao len xuong nua cung deu van con rat hon nhat moi chi',
    'xin chao cam on',
  ]
    .join(' ')
    .split(/\s+/),
);
