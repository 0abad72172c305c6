import { ChatMessage, messageText } from './conversation';
import { analyzeSentiment, SentimentLabel } from './sentiment';
import { detectLanguage, fold, Language, sentences, STOP_WORDS, truncate, words } from './text';

export interface LocalSummary {
  summary: string;
  keyPoints: string[];
  language: Language;
}

interface Candidate {
  text: string;
  order: number;
  message: number;
  fromCustomer: boolean;
  content: Set<string>;
  score: number;
}

// Openers and pleasantries that carry no content of their own (folded).
const PLEASANTRY =
  /^(hi|hello|hey|good (morning|afternoon|evening)|thanks?( you)?( so much)?|thank you|ok(ay)?|yes|no|sure|bye|xin chao|chao( (ban|anh|chi|em|shop))?|alo|da|vang|cam on( (ban|anh|chi|em|shop|nhieu))*|ok (a|nhe|nha)|uh|um)[\s!.?,😊🙂]*$/u;

export function isQuestion(sentence: string): boolean {
  if (sentence.includes('?')) return true;
  const f = fold(sentence.toLowerCase());
  // Questions without a question mark: English word order, Vietnamese question particles.
  return (
    /^(what|how|when|where|why|which|who|can|could|would|do|does|is|are)\b/u.test(f) ||
    /\b(bao nhieu|khi nao|bao gio|o dau|the nao|tai sao|vi sao|duoc khong|khong a|chua a|nao vay|gi vay)\b/u.test(f)
  );
}

function contentWords(text: string): string[] {
  return words(text)
    .map((w) => fold(w))
    .filter((w) => (w.length > 1 || /\d/.test(w)) && !STOP_WORDS.has(w));
}

function jaccard(a: Set<string>, b: Set<string>): number {
  if (!a.size || !b.size) return 0;
  let inter = 0;
  for (const w of a) if (b.has(w)) inter++;
  return inter / (a.size + b.size - inter);
}

const LABELS: Record<Language, { customer: string; agent: string; mood: Record<SentimentLabel, string> }> = {
  en: { customer: 'Customer', agent: 'Agent', mood: { positive: 'positive', neutral: 'neutral', negative: 'negative', mixed: 'mixed' } },
  vi: { customer: 'Khách hàng', agent: 'Nhân viên', mood: { positive: 'tích cực', neutral: 'trung lập', negative: 'tiêu cực', mixed: 'lẫn lộn' } },
};

/**
 * Extractive summary: every sentence is scored by how many of the conversation's frequent content
 * words it holds (normalised by length), with more weight for the customer's words, questions,
 * figures (prices, dates, order numbers) and strong feeling; pleasantries score nothing. The best
 * sentences, in conversation order and without near-duplicates, become the summary and key points,
 * framed in the conversation's language together with the customer's overall mood and whether their
 * last message is still waiting for an answer.
 */
export function summarize(messages: ChatMessage[], contactName: string, totalMessages = messages.length): LocalSummary {
  const texts = messages.map(messageText).filter((t) => t.trim());
  const language = detectLanguage(texts.join('\n'));
  const L = LABELS[language];
  if (messages.length === 0) {
    return {
      summary: language === 'vi' ? 'Cuộc trò chuyện chưa có tin nhắn nào.' : 'This conversation has no messages yet.',
      keyPoints: [],
      language,
    };
  }

  const candidates: Candidate[] = [];
  const tf = new Map<string, number>();
  messages.forEach((m, mi) => {
    for (const s of sentences(messageText(m))) {
      if (PLEASANTRY.test(fold(s.toLowerCase()))) continue;
      const content = contentWords(s);
      if (content.length === 0) continue;
      for (const w of content) tf.set(w, (tf.get(w) ?? 0) + 1);
      candidates.push({ text: s, order: candidates.length, message: mi, fromCustomer: m.fromCustomer, content: new Set(content), score: 0 });
    }
  });

  const maxTf = Math.max(1, ...tf.values());
  const firstCustomer = candidates.find((c) => c.fromCustomer);
  const lastMessage = messages.length - 1;
  for (const c of candidates) {
    let sum = 0;
    for (const w of c.content) sum += (tf.get(w) ?? 0) / maxTf;
    let score = sum / Math.sqrt(c.content.size) + 0.1 * Math.min(c.content.size, 8);
    if (c.fromCustomer) score *= 1.25;
    if (isQuestion(c.text)) score *= 1.3;
    if (/\d/.test(c.text)) score *= 1.2;
    if (Math.abs(analyzeSentiment(c.text).score) >= 0.5) score *= 1.15;
    if (c === firstCustomer) score *= 1.15;
    if (c.message === lastMessage) score *= 1.1;
    if (c.content.size < 3) score *= 0.6;
    c.score = score;
  }

  const picked: Candidate[] = [];
  for (const c of [...candidates].sort((a, b) => b.score - a.score || a.order - b.order)) {
    if (picked.length >= 5) break;
    if (picked.some((p) => jaccard(p.content, c.content) > 0.5)) continue;
    picked.push(c);
  }
  const inSummary = picked.slice(0, Math.max(1, Math.min(3, Math.round(Math.sqrt(candidates.length))))).sort((a, b) => a.order - b.order);
  const keyPoints = picked.sort((a, b) => a.order - b.order).map((c) => `${c.fromCustomer ? L.customer : L.agent}: ${truncate(c.text, 200)}`);

  const customerText = messages
    .filter((m) => m.fromCustomer)
    .map(messageText)
    .join('\n');
  const mood = customerText.trim() ? analyzeSentiment(customerText).sentiment : undefined;
  const last = messages[lastMessage];
  const waiting = last.fromCustomer && sentences(messageText(last)).some(isQuestion);
  const fromCustomer = messages.filter((m) => m.fromCustomer).length;
  const name = contactName.trim() || (language === 'vi' ? 'Khách hàng' : 'The customer');
  const shown = totalMessages > messages.length ? ` (${language === 'vi' ? `trong tổng số ${totalMessages}` : `of ${totalMessages}`})` : '';

  const parts: string[] = [];
  if (language === 'vi') {
    parts.push(`${name} và nhân viên đã trao đổi ${messages.length} tin nhắn gần nhất${shown}, trong đó ${fromCustomer} tin từ khách hàng.`);
    if (inSummary.length) parts.push(`Nội dung chính: ${inSummary.map((c) => `“${truncate(c.text, 160)}”`).join(' ')}`);
    if (mood) parts.push(`Thái độ của khách hàng: ${L.mood[mood]}.`);
    if (waiting) parts.push('Câu hỏi cuối của khách hàng vẫn chưa được trả lời.');
  } else {
    parts.push(`${name} and the team exchanged ${messages.length} recent messages${shown}, ${fromCustomer} of them from the customer.`);
    if (inSummary.length) parts.push(`Main points: ${inSummary.map((c) => `“${truncate(c.text, 160)}”`).join(' ')}`);
    if (mood) parts.push(`The customer's tone is ${L.mood[mood]}.`);
    if (waiting) parts.push("The customer's last question has not been answered yet.");
  }
  if (waiting) keyPoints.push(language === 'vi' ? 'Cần trả lời: câu hỏi cuối của khách hàng.' : "To do: answer the customer's last question.");
  return { summary: parts.join(' '), keyPoints, language };
}
