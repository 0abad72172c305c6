import { containsPhrase, containsText, fold, placeholdersOf, render } from './text';

describe('placeholders and rendering', () => {
  it('finds each variable once, in order, with or without spaces and dotted paths', () => {
    expect(placeholdersOf('Hi {{name}}, {{ phone }} / {{contact.email}} {{name}} {{ bad name }} {{1x}}')).toEqual(['name', 'phone', 'contact.email']);
  });

  it('renders known variables and leaves unknown ones empty', () => {
    const vars: Record<string, string> = { name: 'Lan', 'contact.phone': '+84 90' };
    expect(render('Chào {{name}} ({{contact.phone}}){{missing}}!', (n) => vars[n])).toBe('Chào Lan (+84 90)!');
  });
});

describe('Vietnamese-aware matching', () => {
  it('folds case and diacritics, including đ', () => {
    expect(fold('Đặt HÀNG Báo Giá')).toBe('dat hang bao gia');
  });

  it('a phrase without diacritics matches any accenting, as whole words', () => {
    expect(containsPhrase('Cho mình xin BÁO GIÁ nhé', 'bao gia')).toBe(true);
    expect(containsPhrase('báo-giá?', 'bao gia')).toBe(true);
    expect(containsPhrase('baogia', 'bao gia')).toBe(false);
    expect(containsPhrase('this', 'hi')).toBe(false);
    expect(containsPhrase('Hi there', 'hi')).toBe(true);
  });

  it('a phrase with diacritics matches only those diacritics', () => {
    expect(containsPhrase('Giá bao nhiêu', 'giá')).toBe(true);
    expect(containsPhrase('Ông già rồi', 'giá')).toBe(false);
    // Composed and decomposed forms of the same text are the same text.
    expect(containsPhrase('gia\u0301 si\u0309', 'giá sỉ')).toBe(true);
  });

  it('contains (the operator) is a substring match with the same diacritics rule', () => {
    expect(containsText('Khách hàng VIP', 'vip')).toBe(true);
    expect(containsText('Khách hàng', 'hang')).toBe(true);
    expect(containsText('Khách hàng', 'hãng')).toBe(false);
  });
});
