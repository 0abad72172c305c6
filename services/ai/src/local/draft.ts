import { aiRules } from '@crm/validation';
import { ChatMessage, messageText } from './conversation';
import { isQuestion } from './summary';
import { analyzeSentiment } from './sentiment';
import { detectLanguage, fold, Language, sentences, truncate } from './text';

export const TONES = aiRules.TONES;
export type Tone = (typeof TONES)[number];

export interface LocalDraft {
  draft: string;
  confidence: number;
  language: Language;
  question: string;
  intents: Intent[];
}

/** A knowledge-base passage the draft answers with (knowledge/retrieval.ts): its text and how well it matched (0..1). */
export interface KnowledgeAnswer {
  excerpt: string;
  coverage: number;
}

type Intent =
  'price' | 'shipping' | 'order_status' | 'refund' | 'availability' | 'hours_location' | 'booking' | 'payment' | 'complaint' | 'thanks' | 'general';

// Keywords per intent, in folded form so they match text typed with or without diacritics.
const INTENTS: [Intent, RegExp][] = [
  ['refund', /\b(refund|money back|return (it|this|the)|hoan tien|tra hang|doi tra|doi hang|tra lai tien)\b/u],
  ['order_status', /\b(order status|my order|where is my|tracking|don hang|ma don|kiem tra don|don cua)\b/u],
  [
    'shipping',
    /\b(ship|shipping|deliver|delivery|arrive|giao hang|van chuyen|ship hang|phi ship|bao lau (thi )?(nhan|toi|den)|(khi nao|bao gio) (thi )?(nhan|giao|toi|den))\b/u,
  ],
  // "gia" is "giá" (price) but also "giả" in "hàng giả" (fake goods) and the first syllable of "gia đình", "gia dụng", "gia hạn".
  [
    'price',
    /\b(price|cost|how much|discount|promotion|(?<!hang )gia(?! (dinh|dung|han)\b)|bao nhieu tien|bao nhieu vay|giam gia|khuyen mai|uu dai)\b/u,
  ],
  [
    'availability',
    /\b(in stock|available|availability|sold out|con hang|het hang|con (size|mau|khong)|co san|co hang lai|(khi nao|bao gio) (thi )?co hang)\b/u,
  ],
  ['hours_location', /\b(opening hours|open|close|address|location|where are you|gio mo cua|mo cua|dong cua|dia chi|o dau|chi nhanh)\b/u],
  ['booking', /\b(book|booking|appointment|schedule|reserve|dat lich|lich hen|hen gap|dat cho|dat ban)\b/u],
  ['payment', /\b(pay|payment|transfer|bank|invoice|thanh toan|chuyen khoan|tra gop|hoa don|cod|so tai khoan|stk)\b/u],
];

// A draft from the knowledge base quotes the passage: {excerpt} is filled in last, as it is written.
type Body = Intent | 'knowledge';

const EN_BODY: Record<Body, string> = {
  price: 'our team is checking the latest price and any current promotions for you, and we will send you the details shortly.',
  shipping: 'we are checking the delivery options and the expected delivery time to your address and will update you shortly.',
  order_status: 'we are looking up your order now and will send you its current status shortly.',
  refund: 'we will review your return and refund request right away and explain the next steps.',
  availability: 'we are checking our current stock for you and will confirm availability shortly.',
  hours_location: 'we will send you our opening hours and address right away.',
  booking: 'we would be glad to arrange an appointment; please tell us a day and time that suit you.',
  payment: 'we will send you the available payment methods and the details shortly.',
  complaint: 'we are looking into it now and will come back to you with a solution as soon as possible.',
  thanks: 'you are very welcome, it is our pleasure to help!',
  general: 'we are checking this for you and will reply with the details shortly.',
  knowledge: 'here is what we have on this: {excerpt}',
};

const EN_SHORT: Record<Body, string> = {
  price: 'checking the price now, details shortly.',
  shipping: 'checking delivery time and options, update shortly.',
  order_status: 'checking your order status now.',
  refund: 'reviewing your refund request now; next steps shortly.',
  availability: 'checking stock now, will confirm shortly.',
  hours_location: 'sending our hours and address now.',
  booking: 'happy to book you in: which day and time suit you?',
  payment: 'sending payment options shortly.',
  complaint: 'looking into it now.',
  thanks: 'you are welcome!',
  general: 'checking and will reply shortly.',
  knowledge: '{excerpt}',
};

// Vietnamese bodies take the pronouns of the tone: {we} (bên em / chúng tôi), {you} (anh/chị / quý khách), {a} (polite "ạ").
const VI_BODY: Record<Body, string> = {
  price: '{we} đang kiểm tra giá mới nhất và các chương trình ưu đãi hiện có, sẽ gửi thông tin chi tiết cho {you} ngay{a}.',
  shipping: '{we} đang kiểm tra phương thức và thời gian giao hàng đến địa chỉ của {you}, sẽ báo lại ngay{a}.',
  order_status: '{we} đang tra cứu đơn hàng của {you} và sẽ báo tình trạng đơn ngay{a}.',
  refund: '{we} sẽ xem xét yêu cầu đổi trả, hoàn tiền của {you} ngay và hướng dẫn các bước tiếp theo{a}.',
  availability: '{we} đang kiểm tra tồn kho và sẽ xác nhận tình trạng còn hàng cho {you} ngay{a}.',
  hours_location: '{we} xin gửi {you} giờ mở cửa và địa chỉ ngay{a}.',
  booking: '{we} rất sẵn lòng đặt lịch hẹn cho {you}, {you} vui lòng cho biết ngày và giờ phù hợp{a}.',
  payment: '{we} sẽ gửi {you} các phương thức thanh toán và thông tin chi tiết ngay{a}.',
  complaint: '{we} đang kiểm tra và sẽ phản hồi phương án xử lý sớm nhất có thể{a}.',
  thanks: '{we} rất vui được hỗ trợ {you}{a}!',
  general: '{we} đang kiểm tra thông tin này và sẽ phản hồi chi tiết cho {you} ngay{a}.',
  knowledge: 'theo thông tin của {we}: {excerpt}',
};

const VI_SHORT: Record<Body, string> = {
  price: 'bên em đang kiểm tra giá, sẽ báo ngay ạ.',
  shipping: 'bên em đang kiểm tra thời gian giao hàng, sẽ báo ngay ạ.',
  order_status: 'bên em đang kiểm tra đơn hàng ạ.',
  refund: 'bên em đang xem yêu cầu hoàn tiền, sẽ báo các bước tiếp theo ạ.',
  availability: 'bên em đang kiểm tra hàng, sẽ báo ngay ạ.',
  hours_location: 'bên em gửi giờ mở cửa và địa chỉ ngay ạ.',
  booking: 'anh/chị muốn hẹn ngày giờ nào ạ?',
  payment: 'bên em gửi cách thanh toán ngay ạ.',
  complaint: 'bên em đang kiểm tra ngay ạ.',
  thanks: 'dạ không có gì ạ!',
  general: 'bên em kiểm tra và báo lại ngay ạ.',
  knowledge: '{excerpt}',
};

function vi(body: string, we: string, you: string, a: string): string {
  return body
    .replace(/\{We\}/g, we.charAt(0).toUpperCase() + we.slice(1))
    .replace(/\{we\}/g, we)
    .replace(/\{you\}/g, you)
    .replace(/\{a\}/g, a);
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

const SORRY = { en: 'We are sorry about this experience.', vi: '{We} rất tiếc về trải nghiệm này.' };

/**
 * Greeting, then (for an upset customer) an apology, then the question quoted with the answer to its
 * first topic, further topics as their own sentences, and the tone's closing.
 */
function compose(language: Language, tone: Tone, intents: Body[], name: string, question: string, excerpt = ''): string {
  const q = question ? truncate(question, 160) : '';
  const upset = intents[0] === 'complaint';
  const topics = upset && intents.length > 1 ? intents.slice(1) : intents;
  // The apologetic tone apologises in its greeting already.
  const sorry = upset && tone !== 'apologetic' && topics[0] !== 'complaint';
  const bodies = (table: Record<Body, string>, fill: (b: string) => string = (b) => b) =>
    topics.map((i) => fill(table[i]).replace('{excerpt}', () => excerpt));
  const answer = (parts: string[], lead: (q: string) => string) =>
    [q ? `${lead(q)}${parts[0]}` : cap(parts[0]), ...parts.slice(1).map(cap)].join(' ');
  const short = (first: string, parts: string[]) =>
    [first, (q ? `${language === 'vi' ? 'về' : 're'} “${q}”: ` : '') + parts[0], ...parts.slice(1)]
      .filter(Boolean)
      .map((x, i) => (i ? cap(x) : x))
      .join(' ');

  if (language === 'en') {
    const who = name || 'there';
    const body = bodies(EN_BODY);
    const apology = sorry ? `${SORRY.en} ` : '';
    switch (tone) {
      case 'friendly':
        return `Hi ${who}! Thanks so much for reaching out 😊 ${apology}${answer(body, (x) => `You asked: “${x}” — `)} Feel free to message us anytime if you need anything else!`;
      case 'formal':
        return `Dear ${name || 'customer'}, thank you for contacting us. ${apology}${answer(body, (x) => `Regarding your question “${x}”, `)} Please do not hesitate to contact us should you require any further assistance. Kind regards.`;
      case 'concise':
        return `Hi ${who}, ${short(sorry ? 'sorry about this.' : '', bodies(EN_SHORT))}`;
      case 'apologetic':
        return `Hi ${who}, we sincerely apologise for the inconvenience. ${answer(body, (x) => `About your question “${x}”: `)} Thank you for your patience, and sorry again for the trouble.`;
    }
  }
  const who = name ? `anh/chị ${name}` : 'anh/chị';
  const friendly = (b: string) => vi(b, 'bên em', 'anh/chị', ' ạ');
  const apology = sorry ? `${vi(SORRY.vi, tone === 'formal' ? 'chúng tôi' : 'bên em', '', '')} ` : '';
  switch (tone) {
    case 'friendly':
      return `Dạ em chào ${who} ạ! Cảm ơn anh/chị đã nhắn tin cho bên em 😊 ${apology}${answer(bodies(VI_BODY, friendly), (x) => `Về câu hỏi “${x}”, `)} Anh/chị cần hỗ trợ gì thêm cứ nhắn em nhé!`;
    case 'formal':
      return `Kính chào quý khách${name ? ` ${name}` : ''}. Cảm ơn quý khách đã liên hệ với chúng tôi. ${apology}${answer(
        bodies(VI_BODY, (b) => vi(b, 'chúng tôi', 'quý khách', '')),
        (x) => `Về câu hỏi “${x}”, `,
      )} Nếu cần hỗ trợ thêm, quý khách vui lòng liên hệ với chúng tôi. Trân trọng.`;
    case 'concise':
      return `Chào ${who}, ${short(sorry ? 'bên em xin lỗi vì sự cố này.' : '', bodies(VI_SHORT))}`;
    case 'apologetic':
      return `Dạ em chào ${who} ạ, bên em thành thật xin lỗi vì sự bất tiện này. ${answer(bodies(VI_BODY, friendly), (x) => `Về câu hỏi “${x}”, `)} Mong anh/chị thông cảm và cảm ơn anh/chị đã kiên nhẫn chờ bên em ạ.`;
  }
}

/** The customer's question(s) in a message: the sentences that ask (at most two), else empty. */
export function findQuestion(text: string): string {
  return sentences(text).filter(isQuestion).slice(0, 2).join(' ');
}

/** What the message is about, in the order the customer raised it (at most two topics). */
function intentsOf(text: string): Intent[] {
  const f = fold(text.toLowerCase());
  const found = INTENTS.map(([intent, re]) => ({ intent, at: f.search(re) }))
    .filter((x) => x.at >= 0)
    .sort((a, b) => a.at - b.at)
    .map((x): Intent => x.intent);
  const mood = analyzeSentiment(text);
  const upset = mood.sentiment === 'negative' || mood.emotions.includes('anger') || mood.emotions.includes('frustration');
  // An upset customer hears the apology first, then the answer to what they asked.
  if (upset) return (['complaint', ...found] as Intent[]).slice(0, 2);
  // Praise that asks nothing ("giao hàng siêu nhanh, đóng gói cẩn thận") is thanked, not answered as a topic.
  if (!isQuestion(text) && (mood.sentiment === 'positive' || (!found.length && mood.emotions.includes('gratitude')))) return ['thanks'];
  if (found.length) return found.slice(0, 2);
  return ['general'];
}

/**
 * A template reply to one message: the language of the message, the tone's greeting and closing,
 * the customer's question quoted, and a body for what the customer is asking about (price, delivery,
 * order, refund, stock, hours, booking, payment, a complaint, thanks). Bodies promise to check and
 * never invent prices, dates or policies. Confidence reflects how much the template could recognise.
 */
export function draftReply(message: ChatMessage, context: ChatMessage[], tone: Tone, contactName: string, knowledge?: KnowledgeAnswer): LocalDraft {
  const text = messageText(message);
  const language = text.trim().length >= 12 ? detectLanguage(text) : detectLanguage([...context.map(messageText), text].join('\n'));
  const question = findQuestion(text);
  const intents = intentsOf(text);
  const name = (message.fromCustomer ? message.senderName : '') || contactName || '';
  if (knowledge) {
    // The answer is the organization's own article: quoted, after an apology when the customer is upset.
    const bodies: Body[] = intents[0] === 'complaint' ? ['complaint', 'knowledge'] : ['knowledge'];
    const draft = compose(language, tone, bodies, name.trim(), question, knowledge.excerpt);
    const confidence = Math.min(0.9, 0.55 + 0.35 * knowledge.coverage + (message.fromCustomer ? 0 : -0.1));
    return { draft, confidence: Math.round(confidence * 100) / 100, language, question, intents };
  }
  const draft = compose(language, tone, intents, name.trim(), question);
  let confidence = 0.35;
  if (question) confidence += 0.15;
  if (intents[0] !== 'general') confidence += 0.2;
  if (name) confidence += 0.05;
  if (!message.fromCustomer) confidence -= 0.1;
  return { draft, confidence: Math.round(Math.max(0.1, Math.min(0.8, confidence)) * 100) / 100, language, question, intents };
}
