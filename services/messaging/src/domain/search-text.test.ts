import { highlight, shortWordRule, wordsOf } from './search-text';

const rule = (term: string) => shortWordRule(wordsOf(term));

describe('short words of a search term', () => {
  it('a term of short words only: one phrase pattern (in order, next to each other, the last word open) and their words for the index', () => {
    expect(rule('Lê An')).toEqual({ tsquery: "'le' & 'an':*", patterns: ['(^|[^[:alnum:]])le[^[:alnum:]]+an'] });
  });

  it('beside a longer word: each short word whole, only the last one open, said by the tsquery alone; the longer word is not theirs to match', () => {
    expect(rule('Vũ Mai')).toEqual({ tsquery: "'vu'", patterns: [] });
    expect(rule('mai vu')).toEqual({ tsquery: "'vu':*", patterns: [] });
    expect(rule('an')).toEqual({ tsquery: "'an':*", patterns: [] });
    // A token left out of the tsquery, or punctuation, needs its pattern.
    expect(rule('mai a')).toEqual({ tsquery: undefined, patterns: ['(^|[^[:alnum:]])a'] });
    expect(rule('mai a. vu')).toEqual({ tsquery: "'a' & 'vu':*", patterns: ['(^|[^[:alnum:]])a\\.'] });
    expect(rule('bao gia sp12')).toEqual({ tsquery: undefined, patterns: [] });
  });

  it('leaves a one-letter prefix out of the index query when something else narrows', () => {
    expect(rule('le a')).toEqual({ tsquery: "'le'", patterns: ['(^|[^[:alnum:]])le[^[:alnum:]]+a'] });
    expect(rule('a').tsquery).toBe("'a':*");
  });

  it('needs a boundary only where the word itself has a letter or digit; punctuation is matched as typed', () => {
    expect(rule('a. b')).toEqual({ tsquery: "'a'", patterns: ['(^|[^[:alnum:]])a\\.[^[:alnum:]]*b'] });
    expect(rule('%%')).toEqual({ tsquery: undefined, patterns: ['%%'] });
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
