import { highlight, shortWordRule, tsqueryOperand, wordsOf } from './search-text';

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
    expect(text('xuat hoa don')).toEqual({ tsquery: undefined, patterns: [], substrings: ['xuat', 'hoa', 'don'] });
    expect(text('an')).toEqual({ tsquery: "'an':*", patterns: [], substrings: [] });
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
});
