import { ChatMessage } from './conversation';
import { draftReply } from './draft';
import { lookupPhrase } from './lexicon';
import { analyzeSentiment } from './sentiment';
import { summarize } from './summary';
import { canonical, detectLanguage, hasDiacritics } from './text';

type Intent = ReturnType<typeof draftReply>['intents'][number];

// Customers on the chat network often type Vietnamese without accents. Each row is one message as it
// would be typed with accents and without, the label both spellings must get, and where given the topics
// (intents) a reply draft finds in both; without them, both spellings must still find the same topics.
const TWINS: [accented: string, unaccented: string, label: 'positive' | 'negative' | 'neutral', intents?: Intent[]][] = [
  // Complaints
  ['Hàng giao chậm quá, tôi rất thất vọng', 'Hang giao cham qua, toi rat that vong', 'negative'],
  ['Tôi không hài lòng với chất lượng sản phẩm', 'Toi khong hai long voi chat luong san pham', 'negative'],
  ['Đã 5 ngày rồi mà vẫn chưa nhận được hàng', 'Da 5 ngay roi ma van chua nhan duoc hang', 'negative'],
  ['Áo bị rách một lỗ, chất lượng kém quá', 'Ao bi rach mot lo, chat luong kem qua', 'negative'],
  ['Shop làm ăn lừa đảo, giao sai màu', 'Shop lam an lua dao, giao sai mau', 'negative'],
  ['Nhân viên trả lời thô lỗ, rất khó chịu', 'Nhan vien tra loi tho lo, rat kho chiu', 'negative'],
  ['Điện thoại mới mua đã bị lỗi, không dùng được', 'Dien thoai moi mua da bi loi, khong dung duoc', 'negative'],
  ['Giao hàng trễ hẹn ba lần rồi, bực mình thật', 'Giao hang tre hen ba lan roi, buc minh that', 'negative'],
  ['Tôi muốn khiếu nại về đơn hàng 1234', 'Toi muon khieu nai ve don hang 1234', 'negative'],
  ['Sản phẩm không giống hình, tôi muốn hoàn tiền', 'San pham khong giong hinh, toi muon hoan tien', 'negative'],
  ['Chờ lâu quá mà không ai trả lời', 'Cho lau qua ma khong ai tra loi', 'negative'],
  ['Hộp bị móp, bên trong vỡ hết', 'Hop bi mop, ben trong vo het', 'negative'],
  ['Dịch vụ chăm sóc khách hàng quá tệ', 'Dich vu cham soc khach hang qua te', 'negative'],
  ['Pin yếu, dùng được nửa ngày là hết', 'Pin yeu, dung duoc nua ngay la het', 'negative'],
  ['Tiền mất tật mang, đừng ai mua ở đây', 'Tien mat tat mang, dung ai mua o day', 'negative'],
  ['Tôi rất buồn vì món quà đến muộn', 'Toi rat buon vi mon qua den muon', 'negative'],
  ['Hàng đẹp nhưng giao chậm quá', 'Hang dep nhung giao cham qua', 'negative'],
  ['Hàng không tốt lắm', 'Hang khong tot lam', 'negative'],
  ['Chưa hài lòng lắm về cách đóng gói', 'Chua hai long lam ve cach dong goi', 'negative'],
  ['Sao shop không trả lời tin nhắn vậy?', 'Sao shop ko tra loi tin nhan vay?', 'negative'],
  // Praise
  ['Sản phẩm rất tốt, cảm ơn shop nhiều', 'San pham rat tot, cam on shop nhieu', 'positive'],
  ['Giao hàng nhanh, đóng gói cẩn thận', 'Giao hang nhanh, dong goi can than', 'positive'],
  ['Áo đẹp lắm, mặc vừa in', 'Ao dep lam, mac vua in', 'positive'],
  ['Mình rất hài lòng với dịch vụ', 'Minh rat hai long voi dich vu', 'positive'],
  ['Shop tư vấn nhiệt tình, sẽ ủng hộ tiếp', 'Shop tu van nhiet tinh, se ung ho tiep', 'positive'],
  ['Chất lượng tuyệt vời, đáng đồng tiền', 'Chat luong tuyet voi, dang dong tien', 'positive'],
  ['Hàng chính hãng, dùng rất thích', 'Hang chinh hang, dung rat thich', 'positive'],
  ['Cảm ơn bạn đã hỗ trợ mình nhanh chóng', 'Cam on ban da ho tro minh nhanh chong', 'positive'],
  ['Lần sau mình sẽ quay lại mua tiếp', 'Lan sau minh se quay lai mua tiep', 'positive'],
  ['Đồ ăn ngon, giá cả hợp lý', 'Do an ngon, gia ca hop ly', 'positive'],
  ['Nhân viên thân thiện và chuyên nghiệp', 'Nhan vien than thien va chuyen nghiep', 'positive'],
  ['Tuyệt vời, đúng như mô tả', 'Tuyet voi, dung nhu mo ta', 'positive'],
  ['Hàng về rồi, mình ưng lắm', 'Hang ve roi, minh ung lam', 'positive'],
  ['Sản phẩm ổn, giao hàng đúng hẹn', 'San pham on, giao hang dung hen', 'positive'],
  ['Giao hơi chậm nhưng hàng tốt', 'Giao hoi cham nhung hang tot', 'positive'],
  ['Không tệ, khá ổn so với giá', 'Khong te, kha on so voi gia', 'positive'],
  ['Yêu shop quá, lần nào cũng nhanh', 'Yeu shop qua, lan nao cung nhanh', 'positive'],
  // Questions and logistics
  ['Giá áo khoác bao nhiêu vậy shop?', 'Gia ao khoac bao nhieu vay shop?', 'neutral'],
  ['Shop ơi còn size M không ạ?', 'Shop oi con size M khong a?', 'neutral'],
  ['Bao lâu thì giao tới Hà Nội?', 'Bao lau thi giao toi Ha Noi?', 'neutral'],
  ['Mình muốn đổi sang màu đen được không?', 'Minh muon doi sang mau den duoc khong?', 'neutral'],
  ['Cho mình xin địa chỉ cửa hàng', 'Cho minh xin dia chi cua hang', 'neutral'],
  ['Mình đã chuyển khoản rồi nhé', 'Minh da chuyen khoan roi nhe', 'neutral'],
  ['Đơn hàng của mình đang ở đâu rồi?', 'Don hang cua minh dang o dau roi?', 'neutral'],
  ['Tôi muốn đặt 2 cái, giao trong tuần này', 'Toi muon dat 2 cai, giao trong tuan nay', 'neutral'],
  ['Mình cần mua một đôi dép nam', 'Minh can mua mot doi dep nam', 'neutral'],
  ['Hôm qua mình đặt hàng, hôm nay giao được không?', 'Hom qua minh dat hang, hom nay giao duoc khong?', 'neutral'],
  ['Chăn này có màu xanh không?', 'Chan nay co mau xanh khong?', 'neutral'],
  ['Mình thanh toán khi nhận hàng nhé', 'Minh thanh toan khi nhan hang nhe', 'neutral'],
  ['Shop có bán khẩu trang y tế không?', 'Shop co ban khau trang y te khong?', 'neutral'],
  ['Mình muốn lấy giá buôn cho 50 cái', 'Minh muon lay gia buon cho 50 cai', 'neutral'],
  ['Vui lòng giao giờ hành chính giúp mình', 'Vui long giao gio hanh chinh giup minh', 'neutral'],
  ['Chẳng có gì đặc biệt, hàng bình thường', 'Chang co gi dac biet, hang binh thuong', 'neutral'],
  // Complaints (issue #32: unanswered calls and poor service, typed without accents, must read negative too)
  ['Gọi điện mấy lần không ai nghe máy, dịch vụ kém quá', 'Goi dien may lan khong ai nghe may, dich vu kem qua', 'negative', ['complaint']],
  ['Gọi hotline cả buổi không ai bắt máy, phục vụ quá tệ', 'Goi hotline ca buoi khong ai bat may, phuc vu qua te', 'negative', ['complaint']],
  [
    'Nhắn tin từ hôm qua đến giờ chưa ai trả lời, thất vọng ghê',
    'Nhan tin tu hom qua den gio chua ai tra loi, that vong ghe',
    'negative',
    ['complaint'],
  ],
  ['Giao nhầm hàng cho tôi, tôi đặt áo trắng mà nhận áo đen', 'Giao nham hang cho toi, toi dat ao trang ma nhan ao den', 'negative', ['complaint']],
  ['Đặt size L mà giao size S, làm ăn cẩu thả quá', 'Dat size L ma giao size S, lam an cau tha qua', 'negative', ['complaint']],
  ['Nồi cơm dùng một tuần đã hỏng, quá thất vọng', 'Noi com dung mot tuan da hong, qua that vong', 'negative', ['complaint']],
  ['Shipper thái độ rất tệ, còn quát khách', 'Shipper thai do rat te, con quat khach', 'negative', ['complaint']],
  ['Hàng giả, không phải chính hãng như quảng cáo', 'Hang gia, khong phai chinh hang nhu quang cao', 'negative', ['complaint']],
  ['Tôi bị tính tiền hai lần cho cùng một đơn', 'Toi bi tinh tien hai lan cho cung mot don', 'negative', ['complaint']],
  ['Hoàn tiền cho tôi ngay, tôi không muốn mua nữa', 'Hoan tien cho toi ngay, toi khong muon mua nua', 'negative', ['complaint', 'refund']],
  ['Đồ ăn nguội ngắt, lại còn thiếu món', 'Do an nguoi ngat, lai con thieu mon', 'negative', ['complaint']],
  ['Mùi nước hoa rất hắc, không giống hàng mẫu', 'Mui nuoc hoa rat hac, khong giong hang mau', 'negative', ['complaint']],
  ['Kem dưỡng làm da tôi bị dị ứng, nổi mẩn đỏ', 'Kem duong lam da toi bi di ung, noi man do', 'negative', ['complaint']],
  ['Màn hình bị sọc ngay khi mở hộp, quá tệ', 'Man hinh bi soc ngay khi mo hop, qua te', 'negative', ['complaint']],
  ['Tư vấn một đằng giao một nẻo, không chấp nhận được', 'Tu van mot dang giao mot neo, khong chap nhan duoc', 'negative', ['complaint']],
  ['Đơn hàng bị hủy mà không ai báo, rất bức xúc', 'Don hang bi huy ma khong ai bao, rat buc xuc', 'negative', ['complaint', 'order_status']],
  ['Giày đi hai ngày đã bong keo, chất lượng kém', 'Giay di hai ngay da bong keo, chat luong kem', 'negative', ['complaint']],
  ['Phí ship đắt quá, còn đắt hơn tiền hàng', 'Phi ship dat qua, con dat hon tien hang', 'negative', ['complaint', 'shipping']],
  ['Tôi sẽ không bao giờ mua ở shop này nữa', 'Toi se khong bao gio mua o shop nay nua', 'negative', ['complaint']],
  ['Chờ bảo hành cả tháng vẫn chưa xong, quá chán', 'Cho bao hanh ca thang van chua xong, qua chan', 'negative', ['complaint']],
  // Praise: thanked, whatever it praises
  ['Sản phẩm dùng rất thích, sẽ giới thiệu cho bạn bè', 'San pham dung rat thich, se gioi thieu cho ban be', 'positive', ['thanks']],
  ['Cảm ơn shop, giao hàng siêu nhanh luôn', 'Cam on shop, giao hang sieu nhanh luon', 'positive', ['thanks']],
  ['Bạn nhân viên tư vấn rất dễ thương và nhiệt tình', 'Ban nhan vien tu van rat de thuong va nhiet tinh', 'positive', ['thanks']],
  ['Vải mát, mặc rất thoải mái, rất đáng tiền', 'Vai mat, mac rat thoai mai, rat dang tien', 'positive', ['thanks']],
  ['Đóng gói chắc chắn, hàng không bị móp chút nào', 'Dong goi chac chan, hang khong bi mop chut nao', 'positive', ['thanks']],
  ['Bánh ngon, cả nhà mình đều khen', 'Banh ngon, ca nha minh deu khen', 'positive', ['thanks']],
  ['Dịch vụ hậu mãi rất tốt, cảm ơn bạn nhiều', 'Dich vu hau mai rat tot, cam on ban nhieu', 'positive', ['thanks']],
  ['Máy chạy êm, hút bụi sạch, rất hài lòng', 'May chay em, hut bui sach, rat hai long', 'positive', ['thanks']],
  ['Shop xử lý đổi hàng nhanh gọn, rất chuyên nghiệp', 'Shop xu ly doi hang nhanh gon, rat chuyen nghiep', 'positive', ['thanks']],
  ['Mình mua lần thứ ba rồi, lần nào cũng ưng', 'Minh mua lan thu ba roi, lan nao cung ung', 'positive', ['thanks']],
  ['Giá rẻ mà chất lượng tốt, quá tuyệt', 'Gia re ma chat luong tot, qua tuyet', 'positive', ['thanks']],
  ['Nhận được quà tặng kèm, vui quá shop ơi', 'Nhan duoc qua tang kem, vui qua shop oi', 'positive', ['thanks']],
  ['Cái túi đẹp hơn cả trong hình, cảm ơn shop', 'Cai tui dep hon ca trong hinh, cam on shop', 'positive', ['thanks']],
  ['Sữa rửa mặt dùng rất êm, da mịn hẳn', 'Sua rua mat dung rat em, da min han', 'positive', ['thanks']],
  // Questions and prices
  ['Điện thoại này giá bao nhiêu vậy shop?', 'Dien thoai nay gia bao nhieu vay shop?', 'neutral', ['price']],
  ['Combo hai cái có được giảm giá không ạ?', 'Combo hai cai co duoc giam gia khong a?', 'neutral', ['price']],
  ['Giá sỉ cho đơn 100 cái là bao nhiêu?', 'Gia si cho don 100 cai la bao nhieu?', 'neutral', ['price']],
  ['Tháng này shop có chương trình khuyến mãi gì không?', 'Thang nay shop co chuong trinh khuyen mai gi khong?', 'neutral', ['price']],
  ['Phí ship ra Đà Nẵng hết bao nhiêu tiền?', 'Phi ship ra Da Nang het bao nhieu tien?', 'neutral', ['shipping', 'price']],
  ['Mẫu này còn màu hồng không shop?', 'Mau nay con mau hong khong shop?', 'neutral', ['availability']],
  ['Shop mở cửa đến mấy giờ vậy?', 'Shop mo cua den may gio vay?', 'neutral', ['hours_location']],
  ['Cửa hàng ở quận 3 có chi nhánh không?', 'Cua hang o quan 3 co chi nhanh khong?', 'neutral', ['hours_location']],
  ['Mình muốn đặt lịch làm tóc chiều thứ bảy', 'Minh muon dat lich lam toc chieu thu bay', 'neutral', ['booking']],
  ['Có thanh toán bằng thẻ tín dụng được không?', 'Co thanh toan bang the tin dung duoc khong?', 'neutral', ['payment']],
  ['Mình có thể trả góp qua thẻ không shop?', 'Minh co the tra gop qua the khong shop?', 'neutral', ['payment']],
  ['Cho mình kiểm tra đơn hàng mã 5678 với', 'Cho minh kiem tra don hang ma 5678 voi', 'neutral', ['order_status']],
  ['Mình muốn đổi trả đôi giày vì chật, được không?', 'Minh muon doi tra doi giay vi chat, duoc khong?', 'neutral', ['refund']],
  ['Áo này giặt máy được không shop?', 'Ao nay giat may duoc khong shop?', 'neutral', ['general']],
  ['Bảo hành máy xay bao lâu vậy?', 'Bao hanh may xay bao lau vay?', 'neutral', ['general']],
  ['Hàng có xuất hóa đơn đỏ không ạ?', 'Hang co xuat hoa don do khong a?', 'neutral', ['payment']],
  ['Khi nào thì có hàng lại mẫu này?', 'Khi nao thi co hang lai mau nay?', 'neutral', ['availability']],
  ['Số tài khoản của shop là gì vậy?', 'So tai khoan cua shop la gi vay?', 'neutral', ['payment']],
];

describe('unaccented Vietnamese reads like its accented twin', () => {
  it('the table is what it claims: over 100 distinct pairs, the second spelling without a single accent', () => {
    expect(TWINS.length).toBeGreaterThanOrEqual(100);
    expect(new Set(TWINS.map((t) => t[0])).size).toBe(TWINS.length);
    for (const [accented, unaccented] of TWINS) {
      expect(accented.split(/\s+/).some(hasDiacritics)).toBe(true);
      expect(unaccented.split(/\s+/).some(hasDiacritics)).toBe(false);
    }
  });

  // Every row as four values (jest would pass its done callback in place of a missing fourth).
  it.each(TWINS.map(([a, u, label, intents]) => [a, u, label, intents ?? null] as const))(
    '%s | %s → %s %j',
    (accented, unaccented, label, intents) => {
      const a = analyzeSentiment(accented);
      const u = analyzeSentiment(unaccented);
      expect({ accented: a.sentiment, unaccented: u.sentiment }).toEqual({ accented: label, unaccented: label });
      expect(u.language).toBe('vi');
      expect(a.language).toBe('vi');
      const draft = (text: string) =>
        draftReply({ id: '1', content: text, contentType: 'text', fromCustomer: true, senderName: 'Lan', sentAt: '' }, [], 'friendly', 'Lan');
      const topics = { accented: draft(accented).intents, unaccented: draft(unaccented).intents };
      expect(topics.unaccented).toEqual(topics.accented);
      if (intents) expect(topics.accented).toEqual(intents);
    },
  );

  it('a complaint about unanswered calls and poor service reads negative typed either way, as a complaint', () => {
    for (const text of ['Gọi điện mấy lần không ai nghe máy, dịch vụ kém quá', 'Goi dien may lan khong ai nghe may, dich vu kem qua']) {
      const mood = analyzeSentiment(text);
      expect(mood.sentiment).toBe('negative');
      expect(mood.score).toBeLessThan(-0.4);
      expect(mood.emotions).toContain('frustration');
    }
  });

  it('the phrases added for folded spellings do not take over the other words', () => {
    // "kem" alone is cream, "dat qua" is "đặt qua" (ordered through), "ung dung" is "ứng dụng" (the app).
    expect(analyzeSentiment('Kem chong nang nay dung cho da dau duoc khong?').sentiment).toBe('neutral');
    expect(analyzeSentiment('Minh dat qua ung dung cua shop roi nhe').sentiment).toBe('neutral');
    expect(analyzeSentiment('Hang gia re nhu vay la tot roi').sentiment).toBe('positive');
  });

  it('words whose folded form is another word keep their own meaning', () => {
    // "chăm sóc" (care) is not "chậm" (slow); "muốn" (want) is not "muộn" (late); "tôi" (I) is not "tồi" (bad).
    expect(analyzeSentiment('Chăm sóc khách hàng').sentiment).toBe('neutral');
    expect(analyzeSentiment('Toi muon mua them mot cai').sentiment).toBe('neutral');
    // An accented word is taken as written: "chăn" (blanket) never matches "chán" (bored), accented or not.
    expect(lookupPhrase(['chăn'], true)).toBeUndefined();
    expect(lookupPhrase(['chậm'], true)?.valence).toBeLessThan(0);
    expect(lookupPhrase(['chăm'], true)).toBeUndefined();
    // Partly accented phrases match on the words that carry accents.
    expect(lookupPhrase(['hài', 'long'], true)?.valence).toBeGreaterThan(0);
    expect(lookupPhrase(['hải', 'long'], true)).toBeUndefined();
    // "dang tin": "đáng tin" (trustworthy) or "đăng tin" (posting): ambiguous, not read.
    expect(lookupPhrase(['dang', 'tin'], true)).toBeUndefined();
    expect(lookupPhrase(['đáng', 'tin'], true)?.valence).toBeGreaterThan(0);
  });

  it('the tone mark may sit on either vowel ("hoà" and "hòa")', () => {
    expect(canonical('hoà')).toBe(canonical('hòa'));
    expect(canonical('thuý')).toBe(canonical('thúy'));
    expect(canonical('hoà')).not.toBe(canonical('hoa'));
    // Typed with combining marks (NFD) rather than precomposed letters.
    expect(lookupPhrase(['ha\u0300i', 'lo\u0300ng'], false)?.valence).toBeGreaterThan(0);
  });

  it('English keeps its reading: single unaccented syllables are Vietnamese only in Vietnamese text', () => {
    expect(analyzeSentiment('I do like it, so good').sentiment).toBe('positive');
    expect(analyzeSentiment('Can you ship it on Monday? Te amo is on the card').sentiment).toBe('neutral');
    expect(analyzeSentiment('That was a great experience').language).toBe('en');
    expect(analyzeSentiment('I have been waiting so long, this is terrible').sentiment).toBe('negative');
    expect(detectLanguage('Please hang on, I will check')).toBe('en');
  });
});

describe('reply drafts and summaries see the same message either way', () => {
  const msg = (id: string, content: string, fromCustomer: boolean): ChatMessage => ({
    id,
    content,
    contentType: 'text',
    fromCustomer,
    senderName: fromCustomer ? 'Lan' : 'Minh',
    sentAt: `2025-03-01T10:0${id}:00.000Z`,
  });

  it.each([
    [
      'Hàng giao chậm quá, tôi rất thất vọng. Bao giờ thì nhận được hàng?',
      'Hang giao cham qua, toi rat that vong. Bao gio thi nhan duoc hang?',
      ['complaint', 'shipping'],
    ],
    ['Áo bị rách, tôi muốn hoàn tiền', 'Ao bi rach, toi muon hoan tien', ['complaint', 'refund']],
    ['Áo này giá bao nhiêu, còn hàng không ạ?', 'Ao nay gia bao nhieu, con hang khong a?', ['price', 'availability']],
    ['Cảm ơn shop nhiều nhé', 'Cam on shop nhieu nhe', ['thanks']],
    ['Mình chuyển khoản được không?', 'Minh chuyen khoan duoc khong?', ['payment']],
  ])('draft for "%s" and "%s": intents %j', (accented, unaccented, intents) => {
    const a = draftReply(msg('1', accented, true), [], 'friendly', 'Lan');
    const u = draftReply(msg('1', unaccented, true), [], 'friendly', 'Lan');
    expect(a.intents).toEqual(intents);
    expect(u.intents).toEqual(intents);
    expect(u.language).toBe('vi');
    expect(u.confidence).toBe(a.confidence);
  });

  it('the summary picks the same sentences and mood from the unaccented conversation', () => {
    const accented = [
      'Chào shop, mình đặt áo khoác đen size M tuần trước.',
      'Dạ bên em đã gửi hàng hôm thứ hai ạ.',
      'Đến giờ vẫn chưa nhận được hàng, giao chậm quá, mình rất thất vọng.',
      'Bao giờ thì hàng tới Đà Nẵng?',
    ];
    const unaccented = [
      'Chao shop, minh dat ao khoac den size M tuan truoc.',
      'Da ben em da gui hang hom thu hai a.',
      'Den gio van chua nhan duoc hang, giao cham qua, minh rat that vong.',
      'Bao gio thi hang toi Da Nang?',
    ];
    const conv = (texts: string[]) => texts.map((t, i) => msg(String(i + 1), t, i !== 1));
    const a = summarize(conv(accented), 'Lan');
    const u = summarize(conv(unaccented), 'Lan');
    expect(u.language).toBe('vi');
    expect(a.summary).toMatch(/Thái độ của khách hàng: tiêu cực\./);
    expect(u.summary).toMatch(/Thái độ của khách hàng: tiêu cực\./);
    // Key points quote the original text; which sentences they are must match.
    const which = (points: string[], texts: string[]) => points.map((p) => texts.findIndex((t) => p.includes(t.split(',')[0])));
    expect(which(u.keyPoints, unaccented)).toEqual(which(a.keyPoints, accented));
    expect(u.keyPoints.length).toBe(a.keyPoints.length);
  });
});
