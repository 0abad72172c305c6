import { ChatMessage } from './conversation';
import { draftReply, findQuestion } from './draft';
import { EMOTIONS } from './lexicon';
import { analyzeSentiment } from './sentiment';
import { summarize } from './summary';
import { detectLanguage, fold, sentences } from './text';

const msg = (id: string, content: string, fromCustomer: boolean, senderName = fromCustomer ? 'Lan' : 'Minh'): ChatMessage => ({
  id,
  content,
  contentType: 'text',
  fromCustomer,
  senderName,
  sentAt: `2025-03-01T10:0${id}:00.000Z`,
});

describe('text helpers', () => {
  it('fold removes Vietnamese diacritics, đ included', () => {
    expect(fold('Cảm ơn, đơn hàng đã giao')).toBe('Cam on, don hang da giao');
  });

  it('detects Vietnamese with and without diacritics, and English', () => {
    expect(detectLanguage('Sản phẩm này giá bao nhiêu?')).toBe('vi');
    expect(detectLanguage('san pham nay gia bao nhieu vay shop, co giao hang khong')).toBe('vi');
    expect(detectLanguage('How much is this product and when can you ship it?')).toBe('en');
  });

  it('splits sentences at . ! ? and line breaks, not inside numbers', () => {
    expect(sentences('Áo giá 450.000đ. Còn hàng không?\nCảm ơn!')).toEqual(['Áo giá 450.000đ.', 'Còn hàng không?', 'Cảm ơn!']);
  });
});

describe('lexicon sentiment', () => {
  it.each([
    ['Sản phẩm rất tốt, cảm ơn shop nhiều!', 'positive'],
    ['san pham rat tot, cam on shop nhieu', 'positive'],
    ['Dịch vụ tệ quá 😡', 'negative'],
    ['dich vu te qua', 'negative'],
    ['Chưa nhận được hàng, lo lắng quá', 'negative'],
    ['Hàng đẹp nhưng giao chậm quá', 'negative'],
    ['Không có gì đâu ạ', 'positive'],
    ['I love this product, thank you so much!', 'positive'],
    ['The box arrived damaged and I want a refund.', 'negative'],
    ['I love the design, the battery is awful', 'mixed'],
    ['When will my order arrive?', 'neutral'],
    ['Is it good?', 'neutral'],
  ])('%s → %s', (text, expected) => {
    expect(analyzeSentiment(text).sentiment).toBe(expected);
  });

  it('negation flips polarity in both languages', () => {
    expect(analyzeSentiment('The service was good').score).toBeGreaterThan(0);
    expect(analyzeSentiment('The service was not good').score).toBeLessThan(0);
    expect(analyzeSentiment('Dịch vụ tốt').score).toBeGreaterThan(0);
    expect(analyzeSentiment('Dịch vụ chẳng tốt chút nào').score).toBeLessThan(0);
    expect(analyzeSentiment('Not bad').score).toBeGreaterThan(0);
    // "không biết" (do not know) is not a negation of what follows.
    expect(analyzeSentiment('Không biết áo này có đẹp không').sentiment).not.toBe('negative');
  });

  it('a negated joy reads as disappointment, not joy', () => {
    expect(analyzeSentiment('I am not happy at all').emotions).toEqual(['disappointment']);
  });

  it('boosters strengthen, before the word and (in Vietnamese) after it', () => {
    expect(analyzeSentiment('rất tốt').score).toBeGreaterThan(analyzeSentiment('tốt').score);
    expect(analyzeSentiment('tốt quá').score).toBeGreaterThan(analyzeSentiment('tốt').score);
    expect(analyzeSentiment('very bad').score).toBeLessThan(analyzeSentiment('bad').score);
  });

  it('scores stay within [-1, 1] and emotions within the fixed list', () => {
    const extreme = analyzeSentiment('terrible awful horrible worst scam fraud!!!! 😡😡😡 tệ tồi tệ kinh khủng');
    expect(extreme.score).toBeGreaterThanOrEqual(-1);
    expect(extreme.score).toBeLessThan(-0.9);
    for (const e of extreme.emotions) expect(EMOTIONS).toContain(e);
    expect(analyzeSentiment('').sentiment).toBe('neutral');
  });

  it('is deterministic', () => {
    const t = 'Giao hàng nhanh nhưng đóng gói hơi ẩu, nhân viên thân thiện';
    expect(analyzeSentiment(t)).toEqual(analyzeSentiment(t));
  });
});

describe('extractive summary', () => {
  const conversation = [
    msg('1', 'Chào shop, mình muốn hỏi về chiếc áo khoác màu đen size M.', true),
    msg('2', 'Dạ chào chị Lan, áo khoác đen size M bên em vẫn còn hàng ạ.', false),
    msg('3', 'Giá áo khoác bao nhiêu vậy shop? Có giao hàng đến Đà Nẵng không?', true),
    msg('4', 'Áo khoác giá 450.000đ, giao hàng Đà Nẵng mất 3 ngày ạ.', false),
    msg('5', 'Lần trước mình đặt hàng bị giao chậm quá, lần này có nhanh hơn không?', true),
  ];

  it('picks the sentences about the conversation topic, frames them in its language, flags the open question', () => {
    const s = summarize(conversation, 'Lan');
    expect(s.language).toBe('vi');
    expect(s.summary).toMatch(/^Lan và nhân viên đã trao đổi 5 tin nhắn gần nhất, trong đó 3 tin từ khách hàng\./);
    expect(s.summary).toMatch(/áo khoác/);
    expect(s.summary).toMatch(/Câu hỏi cuối của khách hàng vẫn chưa được trả lời\.$/);
    expect(s.keyPoints).toContain('Nhân viên: Áo khoác giá 450.000đ, giao hàng Đà Nẵng mất 3 ngày ạ.');
    expect(s.keyPoints.length).toBeLessThanOrEqual(6);
  });

  it('leaves out pleasantries and near-duplicates', () => {
    const s = summarize(
      [
        msg('1', 'Hi', true),
        msg('2', 'Hello! Thanks', false),
        msg('3', 'My invoice for March shows the wrong amount.', true),
        msg('4', 'My invoice for March shows a wrong amount!', true),
      ],
      'Tom',
    );
    expect(s.language).toBe('en');
    expect(s.keyPoints).toEqual(['Customer: My invoice for March shows the wrong amount.']);
  });

  it('says so when there is nothing to summarise', () => {
    expect(summarize([], 'Tom').summary).toBe('This conversation has no messages yet.');
  });
});

describe('template drafts', () => {
  const question = msg('1', 'Chào shop. Áo này còn size L không ạ?', true);

  it('finds the question, also without a question mark', () => {
    expect(findQuestion('Hello. When will my order arrive? Thanks')).toBe('When will my order arrive?');
    expect(findQuestion('cho mình hỏi giá bao nhiêu')).toBe('cho mình hỏi giá bao nhiêu');
    expect(findQuestion('Thanks a lot!')).toBe('');
  });

  it('quotes the question in every tone and answers in the message language', () => {
    for (const tone of ['friendly', 'formal', 'concise', 'apologetic'] as const) {
      const d = draftReply(question, [question], tone, 'Lan');
      expect(d.language).toBe('vi');
      expect(d.draft).toContain('“Áo này còn size L không ạ?”');
      expect(d.intents).toEqual(['availability']);
    }
    expect(draftReply(question, [question], 'formal', 'Lan').draft).toMatch(/^Kính chào quý khách Lan\./);
    expect(draftReply(question, [question], 'apologetic', 'Lan').draft).toMatch(/xin lỗi/);
  });

  it('apologises first to an upset customer, never invents facts, and is less sure without a question', () => {
    const upset = draftReply(msg('1', 'My order #77 arrived broken. This is unacceptable!', true, 'Tom'), [], 'friendly', 'Tom');
    expect(upset.intents[0]).toBe('complaint');
    expect(upset.draft).toMatch(/^Hi Tom! Thanks so much for reaching out 😊 We are sorry about this experience\./);
    expect(upset.draft).not.toMatch(/\$|\d+ days/);
    const thanks = draftReply(msg('1', 'Thank you so much!', true, 'Tom'), [], 'concise', 'Tom');
    expect(thanks.intents).toEqual(['thanks']);
    const vague = draftReply(msg('1', 'ok noted', true, 'Tom'), [], 'concise', 'Tom');
    const asked = draftReply(msg('1', 'How much is the delivery fee?', true, 'Tom'), [], 'concise', 'Tom');
    expect(vague.confidence).toBeLessThan(asked.confidence);
    expect(asked.confidence).toBeLessThanOrEqual(0.8);
  });
});
