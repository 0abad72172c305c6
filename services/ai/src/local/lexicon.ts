import { canonical, foldKey, hasDiacritics } from './text';

/**
 * The fixed list of emotions the sentiment endpoint can report (documented in the README). Provider
 * answers are filtered to this list too, so clients can rely on it.
 */
export const EMOTIONS = [
  'joy',
  'gratitude',
  'satisfaction',
  'trust',
  'excitement',
  'surprise',
  'confusion',
  'anxiety',
  'frustration',
  'anger',
  'sadness',
  'disappointment',
  'urgency',
] as const;
export type Emotion = (typeof EMOTIONS)[number];

export interface Entry {
  /** -4 (very negative) .. +4 (very positive); 0 for phrases that only carry an emotion or block a negator. */
  valence: number;
  emotion?: Emotion;
}

type Row = [phrase: string, valence: number, emotion?: Emotion | '', flags?: string];

// English. Inflected forms are listed: matching is on whole words, without stemming.
const EN: Row[] = [
  ['good', 2],
  ['great', 3, 'satisfaction'],
  ['excellent', 3, 'satisfaction'],
  ['amazing', 3, 'excitement'],
  ['awesome', 3, 'excitement'],
  ['fantastic', 3, 'excitement'],
  ['wonderful', 3, 'joy'],
  ['perfect', 3, 'satisfaction'],
  ['nice', 2],
  ['love', 3, 'joy'],
  ['loved', 3, 'joy'],
  ['loving', 2.5, 'joy'],
  ['lovely', 2.5, 'joy'],
  ['liked', 1.5],
  ['happy', 2.5, 'joy'],
  ['glad', 2, 'joy'],
  ['pleased', 2, 'satisfaction'],
  ['satisfied', 2.5, 'satisfaction'],
  ['delighted', 3, 'joy'],
  ['thanks', 1.5, 'gratitude'],
  ['thank', 1.5, 'gratitude'],
  ['thank you', 1.5, 'gratitude'],
  ['thx', 1.5, 'gratitude'],
  ['ty', 1, 'gratitude'],
  ['appreciate', 2, 'gratitude'],
  ['appreciated', 2, 'gratitude'],
  ['grateful', 2.5, 'gratitude'],
  ['helpful', 2, 'satisfaction'],
  ['fast', 1.5, 'satisfaction'],
  ['quick', 1.5, 'satisfaction'],
  ['friendly', 2, 'satisfaction'],
  ['recommend', 2, 'trust'],
  ['recommended', 2, 'trust'],
  ['reliable', 2, 'trust'],
  ['trust', 1.5, 'trust'],
  ['trustworthy', 2, 'trust'],
  ['best', 3, 'satisfaction'],
  ['better', 1.5],
  ['beautiful', 2.5, 'joy'],
  ['smooth', 1.5],
  ['easy', 1.5],
  ['fine', 1],
  ['ok', 0.5],
  ['okay', 0.5],
  ['cool', 1.5],
  ['wow', 2, 'surprise'],
  ['exciting', 2.5, 'excitement'],
  ['excited', 2.5, 'excitement'],
  ["can't wait", 2, 'excitement'],
  ['cant wait', 2, 'excitement'],
  ['fun', 2, 'joy'],
  ['enjoy', 2, 'joy'],
  ['enjoyed', 2, 'joy'],
  ['impressive', 2.5, 'surprise'],
  ['impressed', 2.5, 'surprise'],
  ['surprised', 1, 'surprise'],
  ['resolved', 1.5, 'satisfaction'],
  ['solved', 1.5, 'satisfaction'],
  ['fixed', 1],
  ['worth', 1.5],
  ['affordable', 1.5],
  ['professional', 2, 'trust'],
  ['polite', 1.5],
  ['kind', 1.5],
  ['works', 1],
  ['worked', 1],
  ['working', 0.5],
  ['no problem', 1],
  ['no worries', 1],
  ['no doubt', 1, 'trust'],
  ['not only', 0],
  ['bad', -2.5, 'disappointment'],
  ['terrible', -3, 'frustration'],
  ['awful', -3, 'frustration'],
  ['horrible', -3, 'frustration'],
  ['worst', -3, 'anger'],
  ['poor', -2, 'disappointment'],
  ['disappointed', -2.5, 'disappointment'],
  ['disappointing', -2.5, 'disappointment'],
  ['disappointment', -2.5, 'disappointment'],
  ['unhappy', -2.5, 'sadness'],
  ['sad', -2, 'sadness'],
  ['upset', -2.5, 'anger'],
  ['angry', -3, 'anger'],
  ['furious', -3.5, 'anger'],
  ['mad', -2.5, 'anger'],
  ['annoyed', -2, 'frustration'],
  ['annoying', -2, 'frustration'],
  ['frustrated', -2.5, 'frustration'],
  ['frustrating', -2.5, 'frustration'],
  ['hate', -3, 'anger'],
  ['hated', -3, 'anger'],
  ['useless', -2.5, 'frustration'],
  ['broken', -2, 'frustration'],
  ['damaged', -2, 'frustration'],
  ['defective', -2.5, 'frustration'],
  ['wrong', -1.5],
  ['slow', -1.5, 'frustration'],
  ['late', -1.5, 'frustration'],
  ['delay', -1.5, 'frustration'],
  ['delayed', -1.5, 'frustration'],
  ['missing', -1.5],
  ['lost', -1.5],
  ['problem', -1.5],
  ['problems', -1.5],
  ['issue', -1],
  ['issues', -1],
  ['error', -1.5],
  ['fail', -2],
  ['failed', -2],
  ['failure', -2],
  ['complaint', -2, 'frustration'],
  ['complain', -1.5, 'frustration'],
  ['refund', -1, 'disappointment'],
  ['scam', -3.5, 'anger'],
  ['fraud', -3.5, 'anger'],
  ['cheated', -3, 'anger'],
  ['rude', -2.5, 'anger'],
  ['expensive', -1.5],
  ['overpriced', -2, 'disappointment'],
  ['worried', -2, 'anxiety'],
  ['worry', -1.5, 'anxiety'],
  ['concerned', -1.5, 'anxiety'],
  ['afraid', -2, 'anxiety'],
  ['scared', -2, 'anxiety'],
  ['nervous', -1.5, 'anxiety'],
  ['confused', -1.5, 'confusion'],
  ['confusing', -1.5, 'confusion'],
  ['unclear', -1, 'confusion'],
  ["don't understand", -1, 'confusion'],
  ['dont understand', -1, 'confusion'],
  ['do not understand', -1, 'confusion'],
  ['not sure', -0.5, 'confusion'],
  ['unacceptable', -3, 'anger'],
  ['ridiculous', -2.5, 'anger'],
  ['waste', -2.5, 'frustration'],
  ['ugh', -2, 'frustration'],
  ['cancel', -1],
  ['cancelled', -1],
  ['canceled', -1],
  ['not working', -2, 'frustration'],
  ["doesn't work", -2, 'frustration'],
  ['does not work', -2, 'frustration'],
  ["didn't work", -2, 'frustration'],
  ['stopped working', -2, 'frustration'],
  ['never arrived', -2.5, 'frustration'],
  ['urgent', -0.5, 'urgency'],
  ['urgently', -0.5, 'urgency'],
  ['asap', -0.5, 'urgency'],
  ['immediately', -0.3, 'urgency'],
  ['right now', -0.3, 'urgency'],
  ['emergency', -1, 'urgency'],
  ['hurry', -0.5, 'urgency'],
];

// Vietnamese with diacritics. Without accents, multi-syllable phrases always match their folded form
// (unless two entries of opposite sign fold alike); a single syllable only with flag "u", given to words
// whose folded form mostly means the sentiment word in shop chat. Left out on purpose, because the folded
// form is more often another word: tồi/tôi (I), muộn/muốn (want), rối/rồi (already), xịn/xin (please),
// đắt/đặt (order), dở/đó/đỏ, kém/kem, chán/chăn/chân, tức/tục (thủ tục), lừa/lụa (silk), gấp/gặp,
// mất/mát/mặt, lỗi/lời, vỡ/vợ/vỏ, hỏng/hồng/hông, giận/gian, sợ/số, mê/mẹ, đỉnh/định, bực/bức.
const VI: Row[] = [
  ['tốt', 2, '', 'u'],
  ['tuyệt', 3, 'satisfaction', 'u'],
  ['tuyệt vời', 3, 'joy'],
  ['xuất sắc', 3, 'satisfaction'],
  ['hài lòng', 2.5, 'satisfaction'],
  ['ưng', 2, 'satisfaction', 'u'],
  ['ưng ý', 2.5, 'satisfaction'],
  ['thích', 2, 'joy', 'u'],
  ['yêu', 2.5, 'joy', 'u'],
  ['yêu cầu', 0],
  ['vui', 2, 'joy', 'u'],
  ['vui vẻ', 2, 'joy'],
  ['hạnh phúc', 3, 'joy'],
  ['cảm ơn', 1.5, 'gratitude'],
  ['cám ơn', 1.5, 'gratitude'],
  ['biết ơn', 2.5, 'gratitude'],
  ['nhanh', 1.5, 'satisfaction'],
  ['nhanh chóng', 1.5, 'satisfaction'],
  ['nhanh lên', -0.5, 'urgency'],
  ['chất lượng', 1],
  ['đẹp', 2, 'joy', 'u'],
  ['xinh', 2, 'joy', 'u'],
  ['ngon', 2, 'satisfaction', 'u'],
  ['rẻ', 1, '', 'u'],
  ['hợp lý', 1.5],
  ['chuyên nghiệp', 2, 'trust'],
  ['nhiệt tình', 2, 'satisfaction'],
  ['chu đáo', 2, 'satisfaction'],
  ['thân thiện', 2, 'satisfaction'],
  ['uy tín', 2, 'trust'],
  ['tin tưởng', 2, 'trust'],
  ['đáng tin', 2, 'trust'],
  ['ổn', 1, '', 'u'],
  ['ổn định', 1],
  ['hay quá', 2, 'joy'],
  ['hay lắm', 2, 'joy'],
  ['rất hay', 2, 'joy'],
  ['xịn', 2, 'satisfaction'],
  ['đỉnh', 2.5, 'excitement'],
  ['mê', 2, 'joy'],
  ['bất ngờ', 1, 'surprise'],
  ['ngạc nhiên', 1, 'surprise'],
  ['hào hứng', 2.5, 'excitement'],
  ['háo hức', 2.5, 'excitement'],
  ['mong chờ', 1.5, 'excitement'],
  ['giải quyết', 1, 'satisfaction'],
  ['không sao', 1],
  ['không có gì', 1],
  ['không vấn đề gì', 1],
  ['không biết', 0],
  ['không chỉ', 0],
  ['tệ', -3, 'frustration', 'u'],
  ['tồi', -2.5, 'disappointment'],
  ['tồi tệ', -3, 'frustration'],
  ['tệ hại', -3, 'frustration'],
  ['kém', -2, 'disappointment'],
  ['dở', -2, 'disappointment'],
  ['chán', -2, 'disappointment'],
  ['thất vọng', -2.5, 'disappointment'],
  ['buồn', -2, 'sadness', 'u'],
  ['giận', -2.5, 'anger'],
  ['tức', -2.5, 'anger'],
  ['tức giận', -3, 'anger'],
  ['bực', -2.5, 'anger'],
  ['bực mình', -2.5, 'anger'],
  ['bực bội', -2.5, 'anger'],
  ['khó chịu', -2, 'frustration'],
  ['phiền', -1.5, 'frustration'],
  ['lừa đảo', -3.5, 'anger'],
  ['lừa', -2.5, 'anger'],
  ['chậm', -1.5, 'frustration', 'u'],
  ['chậm trễ', -2, 'frustration'],
  ['trễ', -1.5, 'frustration', 'u'],
  ['muộn', -1.5, 'frustration'],
  ['lâu', -1, 'frustration', 'u'],
  ['hỏng', -2, 'frustration'],
  ['hư', -2, 'frustration'],
  ['hư hỏng', -2, 'frustration'],
  ['lỗi', -1.5, 'frustration'],
  ['bị lỗi', -2, 'frustration'],
  ['vỡ', -2, 'frustration'],
  ['rách', -2, 'frustration', 'u'],
  ['sai', -1.5, '', 'u'],
  ['thiếu', -1, '', 'u'],
  ['mất', -1.5],
  ['đắt', -1.5],
  ['mắc quá', -1.5],
  ['kém chất lượng', -2.5, 'disappointment'],
  ['chất lượng kém', -2.5, 'disappointment'],
  ['không hài lòng', -2.5, 'disappointment'],
  ['không tốt', -2, 'disappointment'],
  ['không ổn', -1.5],
  ['không thích', -2, 'disappointment'],
  ['không nhận được', -2, 'frustration'],
  ['chưa nhận được', -2, 'frustration'],
  ['chưa giao', -1.5, 'frustration'],
  ['không hoạt động', -2, 'frustration'],
  ['không dùng được', -2.5, 'frustration'],
  ['lo lắng', -2, 'anxiety'],
  ['lo ngại', -1.5, 'anxiety'],
  ['sợ', -2, 'anxiety'],
  ['hoang mang', -2, 'anxiety'],
  ['không hiểu', -1, 'confusion'],
  ['chưa hiểu', -1, 'confusion'],
  ['khó hiểu', -1.5, 'confusion'],
  ['rối', -1, 'confusion'],
  ['thắc mắc', -0.3, 'confusion'],
  ['khẩn cấp', -1, 'urgency'],
  ['gấp', -0.5, 'urgency'],
  ['ngay lập tức', -0.3, 'urgency'],
  ['khiếu nại', -2, 'frustration'],
  ['phàn nàn', -2, 'frustration'],
  ['hoàn tiền', -1, 'disappointment'],
  ['trả hàng', -1, 'disappointment'],
  ['vô lý', -2.5, 'anger'],
  ['quá đáng', -2.5, 'anger'],
  ['thô lỗ', -2.5, 'anger'],
  ['kinh khủng', -3, 'anger'],
  ['chán nản', -2.5, 'sadness'],
  ['mệt mỏi', -1.5, 'frustration'],
  ['phí tiền', -2.5, 'frustration'],
  ['lãng phí', -2, 'frustration'],
  ['xấu', -2, 'disappointment', 'u'],
  ['hối hận', -2.5, 'disappointment'],
  // Shop-review phrases: praise and complaints customers write in full.
  ['cẩn thận', 1.5, 'satisfaction'],
  ['ủng hộ', 1.5, 'trust'],
  ['đáng tiền', 2, 'satisfaction'],
  ['đáng đồng tiền', 2, 'satisfaction'],
  ['chính hãng', 1, 'trust'],
  ['sẽ quay lại', 1.5, 'trust'],
  ['đúng như mô tả', 1.5, 'satisfaction'],
  ['đúng hẹn', 1.5, 'satisfaction'],
  ['trễ hẹn', -2, 'frustration'],
  ['giao muộn', -1.5, 'frustration'],
  ['đến muộn', -1.5, 'frustration'],
  ['bị vỡ', -2, 'frustration'],
  ['vỡ hết', -2.5, 'frustration'],
  ['bị móp', -1.5, 'frustration'],
  ['bị hỏng', -2, 'frustration'],
  ['bị hư', -2, 'frustration'],
  ['yếu', -1.5, 'disappointment'],
  ['pin yếu', -2, 'disappointment'],
  ['sóng yếu', -1.5, 'frustration'],
  ['bức xúc', -2.5, 'anger'],
  ['không trả lời', -1.5, 'frustration'],
  ['không ai trả lời', -2, 'frustration'],
  ['tiền mất tật mang', -3, 'anger'],
  // Typed without accents these words fold into others (kém/kem, chán/chăn, đắt/đặt, êm/em, mịn/min, ứng/ưng):
  // the phrases they sit in are not ambiguous, so the complaint or praise reads the same either way.
  ['dịch vụ kém', -2.5, 'disappointment'],
  ['phục vụ kém', -2.5, 'disappointment'],
  ['rất kém', -2.5, 'disappointment'],
  ['không ai nghe máy', -2, 'frustration'],
  ['không ai bắt máy', -2, 'frustration'],
  ['không nghe máy', -1.5, 'frustration'],
  ['không bắt máy', -1.5, 'frustration'],
  ['giao nhầm', -2, 'frustration'],
  ['gửi nhầm', -2, 'frustration'],
  ['nhầm hàng', -2, 'frustration'],
  ['cẩu thả', -2.5, 'frustration'],
  ['tính tiền hai lần', -2, 'anger'],
  ['trừ tiền hai lần', -2, 'anger'],
  ['không giống', -1.5, 'disappointment'],
  ['dị ứng', -2, 'frustration'],
  ['không chấp nhận được', -2.5, 'anger'],
  ['không thể chấp nhận', -2.5, 'anger'],
  ['ship đắt', -1.5, 'disappointment'],
  ['không bao giờ mua', -2.5, 'anger'],
  ['không bao giờ quay lại', -2.5, 'anger'],
  ['quá chán', -2.5, 'disappointment'],
  ['chán quá', -2.5, 'disappointment'],
  ['vẫn chưa xong', -1.5, 'frustration'],
  ['da mịn', 2, 'satisfaction'],
  ['rất êm', 1.5, 'satisfaction'],
];

// Neutral phrases whose unaccented spelling holds a sentiment word ("thuc te" is "thực tế", not "tệ"):
// matched first, they consume their words. A guard that folds like an entry of another sign makes that
// folded form ambiguous, so it is not read at all ("dang tin": "đáng tin" trustworthy or "đăng tin" posting).
const VI_GUARDS: Row[] = [
  ['chăm sóc', 0],
  ['chăm chỉ', 0],
  ['chấm điểm', 0],
  ['chấm công', 0],
  ['dấu chấm', 0],
  ['bao lâu', 0],
  ['lâu dài', 0],
  ['lâu năm', 0],
  ['trẻ em', 0],
  ['trẻ con', 0],
  ['trẻ trung', 0],
  ['giới trẻ', 0],
  ['tuổi trẻ', 0],
  ['đôi dép', 0],
  ['dép nam', 0],
  ['dép nữ', 0],
  ['dép lê', 0],
  ['giày dép', 0],
  ['rẽ trái', 0],
  ['rẽ phải', 0],
  ['thực tế', 0],
  ['y tế', 0],
  ['quốc tế', 0],
  ['kinh tế', 0],
  ['buôn bán', 0],
  ['bán buôn', 0],
  ['giá buôn', 0],
  ['vui lòng', 0],
  ['ung thư', 0],
  ['đăng tin', 0],
  ['xin lỗi', 0],
  // "ung" alone is read as "ưng" (pleased): the words it is part of come first. Not "cung ứng" (supply):
  // "cung ung" is far more often "cũng ưng" (pleased too).
  ['ứng dụng', 0],
  ['đáp ứng', 0],
  ['phản ứng', 0],
  ['ứng viên', 0],
  ['ứng trước', 0],
];

// Teen-code and short spellings common in Vietnamese chat.
const VI_SHORT: Row[] = [
  ['ok', 0.5],
  ['oke', 0.5],
  ['okela', 1.5],
  ['tks', 1.5, 'gratitude'],
  ['ty', 1, 'gratitude'],
];

// Emoji and emoticons.
const EMOJI: Row[] = [
  ['😊', 2, 'joy'],
  ['🙂', 1, 'joy'],
  ['😀', 2, 'joy'],
  ['😃', 2, 'joy'],
  ['😄', 2, 'joy'],
  ['😁', 2, 'joy'],
  ['😍', 3, 'joy'],
  ['🥰', 3, 'joy'],
  ['❤', 2.5, 'joy'],
  ['👍', 1.5, 'satisfaction'],
  ['🙏', 1, 'gratitude'],
  ['🎉', 2, 'excitement'],
  ['😂', 1.5, 'joy'],
  ['😞', -2, 'sadness'],
  ['😢', -2, 'sadness'],
  ['😭', -2.5, 'sadness'],
  ['😡', -3, 'anger'],
  ['😠', -2.5, 'anger'],
  ['🤬', -3.5, 'anger'],
  ['👎', -2, 'disappointment'],
  ['😤', -2, 'frustration'],
  ['😕', -1, 'confusion'],
  ['😟', -1.5, 'anxiety'],
  ['😱', -1, 'surprise'],
  ['🤔', 0, 'confusion'],
  [':)', 1.5, 'joy'],
  [':-)', 1.5, 'joy'],
  [':d', 2, 'joy'],
  ['=)', 1.5, 'joy'],
  ['<3', 2.5, 'joy'],
  [':(', -1.5, 'sadness'],
  [':-(', -1.5, 'sadness'],
  [":'(", -2, 'sadness'],
];

/** Words that turn the polarity of what follows (within three words, up to punctuation or "but"). */
export const NEGATORS = new Set([
  'not',
  'no',
  'never',
  'without',
  'hardly',
  'neither',
  'nor',
  'nothing',
  "don't",
  "doesn't",
  "didn't",
  "isn't",
  "wasn't",
  "aren't",
  "weren't",
  "won't",
  "can't",
  'cannot',
  "couldn't",
  "shouldn't",
  "wouldn't",
  "haven't",
  "hasn't",
  'dont',
  'doesnt',
  'didnt',
  'isnt',
  'wasnt',
  'arent',
  'wont',
  'cant',
  'couldnt',
  'havent',
  'hasnt',
  'không',
  'chẳng',
  'chả',
  'chưa',
  'đừng',
  'ko',
  'k',
  'hok',
  'hông',
  'khong',
  'chang',
  'chua',
  'kg',
  'hem',
]);

/** Multi-word negators, matched before single words. */
export const NEGATOR_PHRASES = new Set(['không hề', 'chẳng hề', 'chưa hề', 'not at all', 'by no means'].map(foldKey));

/** Words that strengthen (> 1) or soften (< 1) the next sentiment word; Vietnamese also puts some after it. */
export const BOOSTERS_BEFORE = new Map<string, number>([
  ['very', 1.5],
  ['really', 1.4],
  ['so', 1.4],
  ['extremely', 1.7],
  ['super', 1.5],
  ['too', 1.3],
  ['totally', 1.5],
  ['absolutely', 1.6],
  ['incredibly', 1.7],
  ['truly', 1.4],
  ['highly', 1.5],
  ['quite', 1.2],
  ['slightly', 0.6],
  ['somewhat', 0.7],
  ['kinda', 0.7],
  ['bit', 0.7],
  ['rất', 1.5],
  ['cực', 1.7],
  ['cực kỳ', 1.7],
  ['cực kì', 1.7],
  ['vô cùng', 1.7],
  ['thật', 1.3],
  ['thật sự', 1.5],
  ['siêu', 1.6],
  ['quá', 1.5],
  ['hơi', 0.6],
  ['khá', 0.8],
]);
/**
 * The same Vietnamese boosters typed without accents, used only in Vietnamese text (English has "so",
 * "that"): "rat te" is "rất tệ". "that" alone ("thật") is left out: in "that vong" it starts "thất vọng".
 */
export const BOOSTERS_BEFORE_FOLDED = new Map<string, number>([
  ['rat', 1.5],
  ['cuc', 1.7],
  ['cuc ky', 1.7],
  ['cuc ki', 1.7],
  ['vo cung', 1.7],
  ['that su', 1.5],
  ['sieu', 1.6],
  ['qua', 1.5],
  ['hoi', 0.6],
  ['kha', 0.8],
]);
export const BOOSTERS_AFTER = new Map<string, number>([
  ['quá', 1.5],
  ['lắm', 1.5],
  ['ghê', 1.4],
  ['thật', 1.3],
  ['cực', 1.5],
  ['vãi', 1.6],
  ['qua', 1.5],
  ['lam', 1.5],
  ['ghe', 1.4],
]);

/** "but"-like words: what follows counts more than what came before (as in VADER). Folded keys. */
export const CONTRASTS = new Set(['but', 'however', 'although', 'though', 'nhưng', 'tuy nhiên', 'mặc dù'].map(foldKey));

/**
 * Chat shorthand read as the word it stands for inside phrases of Vietnamese text ("ko hai long" is
 * "không hài lòng"). Alone, the negators among them are in NEGATORS already.
 */
const CHAT_SPELLINGS = new Map<string, string>([
  ['ko', 'không'],
  ['k', 'không'],
  ['kg', 'không'],
  ['khg', 'không'],
  ['hok', 'không'],
  ['dc', 'được'],
  ['đc', 'được'],
  ['j', 'gì'],
]);

interface Candidate {
  /** The entry's words in canonical accented spelling, to check the words the customer did accent. */
  words: string[];
  entry: Entry;
}

export interface Lexicon {
  /** Every phrase of every language, keyed by its canonical accented spelling. */
  exact: Map<string, Entry>;
  /** Vietnamese phrases by folded form (see VI), for text typed without (some of its) accents. */
  folded: Map<string, Candidate[]>;
  /** Longest phrase, in words. */
  maxWords: number;
}

function entry(row: Row): Entry {
  return row[2] ? { valence: row[1], emotion: row[2] } : { valence: row[1] };
}

const canonicalPhrase = (words: string[]) => words.map(canonical).join(' ');

function build(): Lexicon {
  const exact = new Map<string, Entry>();
  for (const row of [...EN, ...VI, ...VI_GUARDS, ...VI_SHORT, ...EMOJI]) exact.set(canonicalPhrase(row[0].split(' ')), entry(row));
  const folded = new Map<string, Candidate[]>();
  for (const row of [...VI, ...VI_GUARDS]) {
    const words = row[0].split(' ');
    const key = foldKey(row[0]);
    if (words.length === 1 && !row[3]?.includes('u')) continue;
    // A folded form that is also an English (or chat-spelling) entry keeps that meaning.
    if (exact.has(key) && key !== row[0]) continue;
    const list = folded.get(key) ?? [];
    list.push({ words: words.map(canonical), entry: entry(row) });
    folded.set(key, list);
  }
  const maxWords = Math.max(...[...exact.keys(), ...NEGATOR_PHRASES].map((k) => k.split(' ').length));
  return { exact, folded, maxWords };
}

export const LEXICON: Lexicon = build();

/**
 * The entry a run of words spells, accented or not: the exact (canonical) spelling first; otherwise the
 * folded form, among entries whose accents agree with every word the customer did accent ("hài long"
 * is "hài lòng", "chăm" is never "chậm"). Two candidates of opposite sign are ambiguous and read as
 * nothing. A single unaccented syllable is read only when `singleFolded` (Vietnamese text): in English,
 * "on" or "te" are not "ổn" or "tệ".
 */
export function lookupPhrase(typed: string[], singleFolded: boolean): Entry | undefined {
  const words = singleFolded ? typed.map((w) => CHAT_SPELLINGS.get(w) ?? w) : typed;
  const hit = LEXICON.exact.get(canonicalPhrase(words));
  if (hit) return hit;
  if (words.every(hasDiacritics)) return undefined;
  if (words.length === 1 && !singleFolded) return undefined;
  const fits = (LEXICON.folded.get(words.map(foldKey).join(' ')) ?? []).filter((c) =>
    words.every((w, i) => !hasDiacritics(w) || canonical(w) === c.words[i]),
  );
  if (fits.length === 0) return undefined;
  if (fits.some((c) => Math.sign(c.entry.valence) !== Math.sign(fits[0].entry.valence))) return undefined;
  return fits[0].entry;
}
