import {
  BOOSTERS_AFTER,
  BOOSTERS_BEFORE,
  BOOSTERS_BEFORE_FOLDED,
  CONTRASTS,
  Emotion,
  Entry,
  LEXICON,
  lookupPhrase,
  NEGATOR_PHRASES,
  NEGATORS,
} from './lexicon';
import { detectLanguage, foldKey, hasDiacritics, Language, tokenize } from './text';

export type SentimentLabel = 'positive' | 'neutral' | 'negative' | 'mixed';

export interface SentimentAnalysis {
  sentiment: SentimentLabel;
  /** -1 .. 1 */
  score: number;
  emotions: Emotion[];
  language: Language;
  /** Sum of positive and of negative evidence, before normalisation. */
  positive: number;
  negative: number;
}

/** How far a negator reaches, in words. */
const NEGATION_SCOPE = 3;
/** A negated word keeps part of its strength with the opposite sign ("not bad" is mildly good). */
const NEGATION_FACTOR = -0.75;
/** Normalisation constant of the score, as in VADER: s / sqrt(s² + α). */
const ALPHA = 15;
const THRESHOLD = 0.15;

interface Hit {
  valence: number;
  emotion?: Emotion;
}

type Match = { kind: 'entry'; entry: Entry; length: number } | { kind: 'negator'; length: number } | { kind: 'contrast'; length: number };

/**
 * Lexicon sentiment for English and Vietnamese, with or without diacritics: longest phrase first
 * ("không hài lòng" before "không"), negation within three words, boosters before (and, in Vietnamese,
 * after) a word, "but" giving more weight to what follows, questions damping praise, and
 * exclamation marks adding emphasis.
 */
export function analyzeSentiment(text: string): SentimentAnalysis {
  const language = detectLanguage(text);
  const useFolded = language === 'vi';
  const tokens = tokenize(text);
  const hits: Hit[] = [];

  // Sentences (split at . ! ? …) decide question damping and bound contrast and negation.
  let sentence: { hits: Hit[]; contrasted: boolean } = { hits: [], contrasted: false };
  const sentenceHits: { hits: Hit[]; question: boolean }[] = [];
  const closeSentence = (question: boolean) => {
    sentenceHits.push({ hits: sentence.hits, question });
    sentence = { hits: [], contrasted: false };
  };

  let negateLeft = 0;
  let boost = 1;
  let boostLeft = 0;
  let lastHit: Hit | undefined;
  let lastWasHit = false;

  const lookup = (i: number): Match | undefined => {
    for (let n = Math.min(LEXICON.maxWords, tokens.length - i); n >= 1; n--) {
      const slice = tokens.slice(i, i + n);
      if (slice.some((t) => t.kind === 'punct')) continue;
      const words = slice.map((t) => t.text);
      const entry = lookupPhrase(words, useFolded);
      if (entry) return { kind: 'entry', entry, length: n };
      const key = words.map(foldKey).join(' ');
      if (NEGATOR_PHRASES.has(key)) return { kind: 'negator', length: n };
      if (n > 1 && CONTRASTS.has(key)) return { kind: 'contrast', length: n };
      if (n === 1) {
        // Single negators are matched as written: folded, "chả" and "đừng" would be "cha" and "dung" (dùng, đúng).
        if (NEGATORS.has(words[0])) return { kind: 'negator', length: 1 };
        if (CONTRASTS.has(key)) return { kind: 'contrast', length: 1 };
      }
    }
    return undefined;
  };

  /** A booster as written, or (Vietnamese text, word typed without accents) its folded form. */
  const boosterFactor = (words: string[]): number | undefined =>
    BOOSTERS_BEFORE.get(words.join(' ')) ?? (useFolded && !words.some(hasDiacritics) ? BOOSTERS_BEFORE_FOLDED.get(words.join(' ')) : undefined);

  const boosterAt = (i: number): { factor: number; length: number } | undefined => {
    const next = tokens[i + 1];
    const two = next?.kind === 'word' ? boosterFactor([tokens[i].text, next.text]) : undefined;
    if (two) return { factor: two, length: 2 };
    const one = boosterFactor([tokens[i].text]);
    return one ? { factor: one, length: 1 } : undefined;
  };

  let i = 0;
  while (i < tokens.length) {
    const t = tokens[i];
    if (t.kind === 'punct') {
      if (/[.!?…]/.test(t.text)) closeSentence(t.text.includes('?'));
      negateLeft = 0;
      boostLeft = 0;
      lastWasHit = false;
      i++;
      continue;
    }
    // A booster after a word ("tốt quá", "chán lắm") strengthens the word just matched.
    if (lastWasHit && lastHit && BOOSTERS_AFTER.has(t.text) && !LEXICON.exact.has(t.text)) {
      lastHit.valence *= BOOSTERS_AFTER.get(t.text)!;
      lastWasHit = false;
      i++;
      continue;
    }
    const m = lookup(i);
    if (m?.kind === 'entry' && (m.entry.valence !== 0 || m.entry.emotion)) {
      let valence = m.entry.valence * (boostLeft > 0 ? boost : 1);
      let emotion = m.entry.emotion;
      if (negateLeft > 0) {
        // "not happy" is disappointment, not joy; "not angry" says no particular emotion.
        emotion = valence > 0 && emotion && emotion !== 'gratitude' ? 'disappointment' : undefined;
        valence *= NEGATION_FACTOR;
        negateLeft = 0;
      }
      if (sentence.contrasted) valence *= 1.5;
      const hit: Hit = { valence, emotion };
      sentence.hits.push(hit);
      hits.push(hit);
      lastHit = hit;
      lastWasHit = true;
      boostLeft = 0;
      i += m.length;
      continue;
    }
    lastWasHit = false;
    if (m?.kind === 'entry') {
      // A neutral phrase such as "không biết" or "yêu cầu": it consumes its words (so its "không" negates nothing).
      negateLeft = Math.max(0, negateLeft - m.length);
      i += m.length;
      continue;
    }
    if (m?.kind === 'negator') {
      negateLeft = NEGATION_SCOPE;
      i += m.length;
      continue;
    }
    if (m?.kind === 'contrast') {
      for (const h of sentence.hits) h.valence *= 0.5;
      sentence.contrasted = true;
      negateLeft = 0;
      i += m.length;
      continue;
    }
    const b = boosterAt(i);
    if (b) {
      boost = b.factor;
      boostLeft = 2;
      i += b.length;
      continue;
    }
    if (negateLeft > 0) negateLeft--;
    if (boostLeft > 0) boostLeft--;
    i++;
  }
  closeSentence(false);

  // Praise inside a question ("is it good?") says little; thanks and complaints keep their weight.
  for (const s of sentenceHits) {
    if (!s.question) continue;
    for (const h of s.hits) if (h.valence > 0 && h.emotion !== 'gratitude') h.valence *= 0.25;
  }

  let positive = 0;
  let negative = 0;
  const emotionWeight = new Map<Emotion, number>();
  for (const h of hits) {
    if (h.valence > 0) positive += h.valence;
    else negative -= h.valence;
    if (h.emotion) emotionWeight.set(h.emotion, (emotionWeight.get(h.emotion) ?? 0) + Math.max(Math.abs(h.valence), 0.5));
  }
  const exclamations = Math.min(4, (text.match(/!/g) ?? []).length);
  const emphasis = 1 + 0.08 * exclamations;
  positive *= emphasis;
  negative *= emphasis;

  const sum = positive - negative;
  const score = round(Math.max(-1, Math.min(1, sum / Math.sqrt(sum * sum + ALPHA))));
  let sentiment: SentimentLabel;
  if (positive >= 1.5 && negative >= 1.5 && Math.min(positive, negative) / Math.max(positive, negative) >= 0.5) sentiment = 'mixed';
  else if (score >= THRESHOLD) sentiment = 'positive';
  else if (score <= -THRESHOLD) sentiment = 'negative';
  else sentiment = 'neutral';

  // The strongest emotions; faint ones next to a much stronger one (the "great" in "great but terrible") are noise.
  const ranked = [...emotionWeight.entries()].sort((a, b) => b[1] - a[1]);
  const top = ranked[0]?.[1] ?? 0;
  const emotions = ranked
    .filter(([, w]) => w >= 0.4 * top)
    .slice(0, 3)
    .map(([e]) => e);
  return { sentiment, score, emotions, language, positive: round(positive), negative: round(negative) };
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000 || 0;
}
