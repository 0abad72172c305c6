/**
 * Reading a contact's reply to the CSAT question as a rating 1-5 (issue #29 item 6). A reply is a rating when it
 * starts with one: a digit 1-5 (also "4/5", "4 stars", the keycap 4️⃣), a run of 1-5 stars (★ or ⭐; ☆ counts as an
 * empty star), or one of the faces the question may show (😡 1, 😞 2, 😐 3, 🙂 4, 😍 5 and their near kin); or when the
 * whole reply is one plain word of judgement ("bad", "ok", "great", …). What follows the rating is its comment.
 * Anything else ("10", "3.5", "5 minutes later please") is no rating.
 */

export interface ParsedRating {
  rating: number;
  /** The text after the rating, trimmed; null when there is none. */
  comment: string | null;
}

const FACES: Record<string, number> = {
  '😡': 1,
  '😠': 1,
  '🤬': 1,
  '😞': 2,
  '🙁': 2,
  '☹': 2,
  '😕': 2,
  '😐': 3,
  '😶': 3,
  '🙂': 4,
  '😊': 4,
  '👍': 4,
  '😍': 5,
  '🤩': 5,
  '😁': 5,
  '😀': 5,
  '😃': 5,
  '🥰': 5,
};

const WORDS: Record<string, number> = {
  terrible: 1,
  awful: 1,
  horrible: 1,
  bad: 2,
  poor: 2,
  ok: 3,
  okay: 3,
  average: 3,
  fine: 3,
  good: 4,
  great: 5,
  excellent: 5,
  perfect: 5,
  amazing: 5,
};

/** Separators between a rating and its comment. */
const LEAD = /^[\s,.;:!\-–—]+/u;

function rest(text: string): string | null {
  const t = text.replace(LEAD, '').trim();
  return t ? t : null;
}

export function parseRating(content: string): ParsedRating | null {
  const text = content.trim();
  if (!text) return null;

  // A digit 1-5 on its own: "4", "4/5", "4 / 5", "4 stars", "4*", "4️⃣", then the comment.
  const digit = /^([1-5])(?:\uFE0F?\u20E3)?(?:\s*\/\s*5)?(?:\s*(?:stars?|\*))?(?![\d.,]?\d)/iu.exec(text);
  if (digit) return { rating: Number(digit[1]), comment: rest(text.slice(digit[0].length)) };

  // Stars: ★★★☆☆ or ⭐⭐⭐ (variation selectors and spaces between them allowed).
  const stars = /^(?:[★⭐☆]\uFE0F?\s*)+/u.exec(text);
  if (stars) {
    const full = [...stars[0]].filter((c) => c === '★' || c === '⭐').length;
    return full >= 1 && full <= 5 ? { rating: full, comment: rest(text.slice(stars[0].length)) } : null;
  }

  // A face: the first symbol of the reply.
  const first = [...text][0].replace('\uFE0F', '');
  const face = FACES[first];
  if (face) return { rating: face, comment: rest(text.slice([...text][0].length).replace(/^\uFE0F/u, '')) };

  // One word and nothing else.
  const word = WORDS[text.toLowerCase().replace(/[.!]+$/u, '')];
  if (word) return { rating: word, comment: null };
  return null;
}
