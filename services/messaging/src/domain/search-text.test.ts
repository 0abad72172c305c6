import { highlight, shortWordRule, tsqueryOperand, wordsOf } from './search-text';

const rule = (term: string) => shortWordRule(wordsOf(term));

describe('short words of a search term', () => {
  const LE_AN = '(^|[^[:alnum:]])le[^[:alnum:]]+an';

  it('a term of short words only: its adjacent words as pair tokens (the last word open), the phrase pattern checked on what they find', () => {
    expect(rule('Lê An')).toEqual({ tsquery: "'le~an':*", patterns: [], phrase: LE_AN });
    // Two pairs may be apart ("a b x b c"): the phrase pattern is what says "a b c".
    expect(rule('a b c')).toEqual({
      tsquery: "'a~b' & 'b~c':*",
      patterns: [],
      phrase: '(^|[^[:alnum:]])a[^[:alnum:]]+b[^[:alnum:]]+c',
    });
  });

  it('beside a longer word: each short word whole, only the last one open, said by the tsquery alone; the longer word is not theirs to match', () => {
    expect(rule('Vũ Mai')).toEqual({ tsquery: "'vu'", patterns: [] });
    expect(rule('mai vu')).toEqual({ tsquery: "'vu':*", patterns: [] });
    expect(rule('an')).toEqual({ tsquery: "'an':*", patterns: [] });
    // Not pairs: beside a longer word the words need not be next to each other.
    expect(rule('le an gui')).toEqual({ tsquery: "'le' & 'an'", patterns: [] });
    // A token left out of the tsquery, or punctuation, needs its pattern.
    expect(rule('mai a')).toEqual({ tsquery: undefined, patterns: ['(^|[^[:alnum:]])a'] });
    expect(rule('mai a. vu')).toEqual({ tsquery: "'a' & 'vu':*", patterns: ['(^|[^[:alnum:]])a\\.'] });
    expect(rule('bao gia sp12')).toEqual({ tsquery: undefined, patterns: [] });
  });

  it('leaves a one-letter prefix out of the index query when something else narrows; in a pair it narrows', () => {
    expect(rule('le a')).toEqual({ tsquery: "'le~a':*", patterns: [], phrase: '(^|[^[:alnum:]])le[^[:alnum:]]+a' });
    expect(rule('a').tsquery).toBe("'a':*");
    expect(rule('ab %% c')).toEqual({ tsquery: "'ab'", patterns: ['(^|[^[:alnum:]])ab[^[:alnum:]]*%%[^[:alnum:]]*c'] });
  });

  it('needs a boundary only where the word itself has a letter or digit; punctuation is matched as typed', () => {
    expect(rule('a. b')).toEqual({ tsquery: "'a~b':*", patterns: [], phrase: '(^|[^[:alnum:]])a\\.[^[:alnum:]]*b' });
    // The last word ends with punctuation: whole, not open.
    expect(rule('a b.')).toEqual({ tsquery: "'a~b'", patterns: [], phrase: '(^|[^[:alnum:]])a[^[:alnum:]]+b\\.' });
    expect(rule('%%')).toEqual({ tsquery: undefined, patterns: ['%%'] });
    // A word without a letter or digit breaks the pairs: its neighbours are looked for alone, the phrase is the rule.
    expect(rule('ab %% cd')).toEqual({ tsquery: "'ab' & 'cd':*", patterns: ['(^|[^[:alnum:]])ab[^[:alnum:]]*%%[^[:alnum:]]*cd'] });
    expect(rule('%% %%')).toEqual({ tsquery: undefined, patterns: ['%%[^[:alnum:]]*%%'] });
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

describe('highlight with short words', () => {
  it('marks a short word where it starts a word, not inside one', () => {
    expect(highlight('khong, cảm ơn shop', 'ơn')).toBe('khong, cảm <mark>ơn</mark> shop');
    expect(highlight('ole and hoàng lê anh', 'le an')).toBe('ole and hoàng <mark>lê an</mark>h');
  });

  it('marks a short word that is not the last one only as a whole word', () => {
    expect(highlight('an anh partners', 'an partners')).toBe('<mark>an</mark> anh <mark>partners</mark>');
  });
});
