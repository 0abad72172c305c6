import { highlight, phraseIndexConditions, shortWordRule, tsqueryOperand, wordsAnyOrderPattern, wordsOf } from './search-text';

const rule = (term: string) => shortWordRule(wordsOf(term));

describe('short words of a search term', () => {
  const LE_AN = '(^|[^[:alnum:]])le[^[:alnum:]]+an';

  it('a term of short words only: its adjacent words as pair tokens (the last word open), the phrase pattern checked on what they find', () => {
    expect(rule('Lê An')).toEqual({ tsquery: "'le~an':*", patterns: [], phrase: LE_AN, substrings: [] });
    // Two pairs may be apart ("a b x b c"): the phrase pattern is what says "a b c".
    expect(rule('a b c')).toEqual({
      tsquery: "'a~b' & 'b~c':*",
      patterns: [],
      phrase: '(^|[^[:alnum:]])a[^[:alnum:]]+b[^[:alnum:]]+c',
      substrings: [],
    });
  });

  it('beside a longer word: each short word whole, only the last one open, said by the tsquery alone; the longer word is not theirs to match', () => {
    expect(rule('Vũ Mai')).toEqual({ tsquery: "'vu'", patterns: [], substrings: ['mai'] });
    expect(rule('mai vu')).toEqual({ tsquery: "'vu':*", patterns: [], substrings: ['mai'] });
    expect(rule('an')).toEqual({ tsquery: "'an':*", patterns: [], substrings: [] });
    // Not pairs: beside a longer word the words need not be next to each other.
    expect(rule('le an gui')).toEqual({ tsquery: "'le' & 'an'", patterns: [], substrings: ['gui'] });
    // A token left out of the tsquery, or punctuation, needs its pattern.
    expect(rule('mai a')).toEqual({ tsquery: undefined, patterns: ['(^|[^[:alnum:]])a'], substrings: ['mai'] });
    expect(rule('mai a. vu')).toEqual({ tsquery: "'a' & 'vu':*", patterns: ['(^|[^[:alnum:]])a\\.'], substrings: ['mai'] });
    expect(rule('bao gia sp12')).toEqual({ tsquery: undefined, patterns: [], substrings: ['bao', 'gia', 'sp12'] });
  });

  it('leaves a one-letter prefix out of the index query when something else narrows; in a pair it narrows', () => {
    expect(rule('le a')).toEqual({ tsquery: "'le~a':*", patterns: [], phrase: '(^|[^[:alnum:]])le[^[:alnum:]]+a', substrings: [] });
    expect(rule('a').tsquery).toBe("'a':*");
    expect(rule('ab %% c')).toEqual({ tsquery: "'ab'", patterns: ['(^|[^[:alnum:]])ab[^[:alnum:]]*%%[^[:alnum:]]*c'], substrings: [] });
  });

  it('needs a boundary only where the word itself has a letter or digit; punctuation is matched as typed', () => {
    expect(rule('a. b')).toEqual({ tsquery: "'a~b':*", patterns: [], phrase: '(^|[^[:alnum:]])a\\.[^[:alnum:]]*b', substrings: [] });
    // The last word ends with punctuation: whole, not open.
    expect(rule('a b.')).toEqual({ tsquery: "'a~b'", patterns: [], phrase: '(^|[^[:alnum:]])a[^[:alnum:]]+b\\.', substrings: [] });
    expect(rule('%%')).toEqual({ tsquery: undefined, patterns: ['%%'], substrings: [] });
    // A word without a letter or digit breaks the pairs: its neighbours are looked for alone, the phrase is the rule.
    expect(rule('ab %% cd')).toEqual({ tsquery: "'ab' & 'cd':*", patterns: ['(^|[^[:alnum:]])ab[^[:alnum:]]*%%[^[:alnum:]]*cd'], substrings: [] });
    expect(rule('%% %%')).toEqual({ tsquery: undefined, patterns: ['%%[^[:alnum:]]*%%'], substrings: [] });
  });

  it('quotes every lexeme, so nothing typed becomes tsquery syntax', () => {
    expect(tsqueryOperand('le~an', true)).toBe("'le~an':*");
    expect(tsqueryOperand("it's", false)).toBe("'it\\'s'");
    expect(tsqueryOperand('a\\', false)).toBe("'a\\\\'");
    // Operators and quotes typed in a term never reach a lexeme: only letters, digits and the pair separator do.
    expect(rule("'a | b'").tsquery).toBe("'a' & 'b'");
    expect(rule("o' & (x)").tsquery).toBe("'o'");
  });
});

describe('short words in message text: the term is a phrase', () => {
  const text = (term: string) => shortWordRule(wordsOf(term), 'text');
  const W = '[^[:alnum:]]';

  it('pairs each short word with its neighbours, longer words cut to three characters as the index cuts them', () => {
    expect(text('Hồ Uyên')).toEqual({ tsquery: "'ho~uye'", patterns: [], phrase: `(^|${W})ho${W}+uyen`, substrings: [] });
    // A short word between two longer ones: both pairs; the phrase says the longer words in full.
    expect(text('giao ve ha noi')).toEqual({
      tsquery: "'gia~ve' & 've~ha' & 'ha~noi'",
      patterns: [],
      phrase: `(^|${W})giao${W}+ve${W}+ha${W}+noi`,
      substrings: [],
    });
    // The phrase says the longer words; only one with a digit away from every short word keeps its substring
    // condition (rare: its posting list is what finds it).
    expect(text('bao gia sp12 ok').substrings).toEqual([]);
    expect(text('em o sai gon sp12').substrings).toEqual(['sp12']);
    expect(text('em o sai gon sp12').tsquery).toBe("'em~o' & 'o~sai'");
    expect(text('bao gia sp12 ok').tsquery).toBe("'sp1~ok'");
  });

  it('a short last word after a longer one is whole (the index has no pair for a longer word it may start)', () => {
    expect(text('Hoàng Vy')).toEqual({ tsquery: "'hoa~vy'", patterns: [], phrase: `(^|${W})hoang${W}+vy(${W}|$)`, substrings: [] });
    expect(text('hoang v').tsquery).toBe("'hoa~v'");
    // After a short word it stays open, as before.
    expect(text('le an').tsquery).toBe("'le~an':*");
  });

  it('uses the run of letters and digits next to the short word', () => {
    // "12" is short itself, so the index pairs it with whatever word follows: "ok" stays open.
    expect(text('sp-12 ok').tsquery).toBe("'12~ok':*");
    expect(text('ok sp-12').tsquery).toBe("'ok~sp'");
  });

  it('terms without short words, and a single word, are not phrases', () => {
    expect(text('xuat hoa don').phrase).toBeUndefined();
    expect(text('an')).toEqual({ tsquery: "'an':*", patterns: [], substrings: [] });
    // A single longer word is still a substring, anywhere.
    expect(text('khoan')).toEqual({ tsquery: undefined, patterns: [], substrings: ['khoan'] });
  });
});

describe('longer words in message text: each a word, the last one the start of a word', () => {
  const text = (term: string) => shortWordRule(wordsOf(term), 'text');
  const W = '[^[:alnum:]]';

  it('asks the word index for each word: a whole word by its whole token, three letters and a last word of letters by their first three', () => {
    // "Hoàng Hoa": the whole word "hoang", none in a million messages, where its trigrams were 36,000 rows apart.
    expect(text('Hoàng Hoa')).toEqual({
      tsquery: "'hoang' & 'hoa'",
      patterns: [`(^|${W})hoang(${W}|$)`, `(^|${W})hoa`],
      substrings: [],
      prefilters: ['%hoang%', '%hoa%'],
    });
    expect(text('xuat hoa don').tsquery).toBe("'xuat' & 'hoa' & 'don'");
    expect(text('chuyen khoan').tsquery).toBe("'chuyen' & 'kho'");
    // The same word cut and whole, accents and case folded.
    expect(text('CHUYỂN KHOẢN')).toEqual(text('chuyen khoan'));
  });

  it('a last word with a digit is a prefix of the whole-word tokens (a code is rare, its first three characters are not)', () => {
    expect(text('bao gia SP12').tsquery).toBe("'bao' & 'gia' & 'sp12':*");
    expect(text('SP12 bao gia').tsquery).toBe("'sp12' & 'bao' & 'gia'");
  });

  it('a word with punctuation gives each of its runs, the last one open only at the end of the term; the patterns say it as typed', () => {
    expect(text('shop.vn gui')).toEqual({
      tsquery: "'shop' & 'vn' & 'gui'",
      patterns: [`(^|${W})shop\\.vn(${W}|$)`, `(^|${W})gui`],
      substrings: [],
      prefilters: ['%shop.vn%', '%gui%'],
    });
    expect(text('gui sp-12').tsquery).toBe("'gui' & 'sp' & '12':*");
    // A one-letter prefix narrows nothing: left out, its pattern stays.
    expect(text('gui a.b').tsquery).toBe("'gui' & 'a'");
    expect(text('gui a.b').patterns).toEqual([`(^|${W})gui(${W}|$)`, `(^|${W})a\\.b`]);
    // Without a letter or digit a word gives the index nothing.
    expect(text('%%% gui').tsquery).toBe("'gui'");
    expect(text('%%% gui').patterns).toEqual(['%%%', `(^|${W})gui`]);
  });

  it('cuts a word longer than the index keeps whole, and takes the cut as a prefix', () => {
    const long = 'a'.repeat(40);
    expect(text(`${long} gui`).tsquery).toBe(`'${'a'.repeat(32)}':* & 'gui'`);
  });

  it('quotes whatever is typed: operators stay text', () => {
    expect(text("it's gui").tsquery).toBe("'it' & 's' & 'gui'");
    expect(text('(hoa) don:* !gui').tsquery).toBe("'hoa' & 'don' & 'gui'");
  });

  it('counts its index conditions (walkNewest asks how common it is from two on); a single word has none to count', () => {
    expect(phraseIndexConditions(wordsOf('chuyen khoan'))).toBe(2);
    expect(phraseIndexConditions(wordsOf('khoan'))).toBe(0);
  });

  it('the estimate pattern holds every word as the start of a word, in any order', () => {
    const re = new RegExp(wordsAnyOrderPattern(wordsOf('giao hang')).replace(/\[\^\[:alnum:\]\]/g, '[^\\p{L}\\p{Nd}]'), 'u');
    expect(re.test('ship giao hang nhanh')).toBe(true);
    expect(re.test('hang se giao')).toBe(true);
    expect(re.test('xiao hang')).toBe(false);
    expect(re.test('giao roi')).toBe(false);
  });
});

describe('highlight with short words', () => {
  it('marks a short word where it starts a word, not inside one', () => {
    expect(highlight('khong, cảm ơn shop', 'ơn')).toBe('khong, cảm <mark>ơn</mark> shop');
    expect(highlight('ole and hoàng lê anh', 'le an')).toBe('ole and hoàng <mark>lê an</mark>h');
  });

  it('marks a short word that is not the last one only as a whole word', () => {
    expect(highlight('an anh partners', 'an partners')).toBe('<mark>an</mark> anh <mark>partners</mark>');
  });

  it('marks the words of a term of longer words where the search takes them: whole, the last one as a start', () => {
    expect(highlight('hàng sẽ giao, xiao hangs giaohang', 'giao hang')).toBe(
      '<mark>hàng</mark> sẽ <mark>giao</mark>, xiao <mark>hang</mark>s giaohang',
    );
    // A single longer word is still marked anywhere.
    expect(highlight('giaohang', 'hang')).toBe('giao<mark>hang</mark>');
  });
});
