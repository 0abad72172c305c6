import { normalisePhone, phoneSearch } from './phone';

describe('normalisePhone', () => {
  it.each([
    ['0912 345 678', '+84912345678'],
    ['+84 912-345-678', '+84912345678'],
    ['0084912345678', '+84912345678'],
    ['84912345678', '+84912345678'],
    ['(028) 3823 4567', '+842838234567'],
    ['+1 (415) 555-0100', '+14155550100'],
    ['', ''],
    ['   ', ''],
  ])('%s → %s (one spelling per number, default country VN)', (raw, expected) => {
    expect(normalisePhone(raw, 'VN')).toBe(expected);
  });

  it('keeps the digits of numbers it cannot place', () => {
    expect(normalisePhone('12345', 'VN')).toBe('12345');
  });

  it('is a 400 naming the field for text that is not a phone number', () => {
    expect(() => normalisePhone('call me maybe', 'VN')).toThrow(
      expect.objectContaining({ kind: 'invalid_argument', details: [expect.objectContaining({ field: 'phone' })] }),
    );
    expect(() => normalisePhone('12', 'VN', 'mobile')).toThrow(expect.objectContaining({ details: [expect.objectContaining({ field: 'mobile' })] }));
  });
});

describe('phoneSearch', () => {
  it('matches a typed number whole, by its beginning in national or international spelling, and by its end', () => {
    expect(phoneSearch('0912 345 678', 'VN')).toEqual({
      exact: '+84912345678',
      prefixes: ['+84912345678', '+0912345678', '0912345678'],
      suffix: '0912345678',
    });
    expect(phoneSearch('0912', 'VN')).toEqual({ exact: undefined, prefixes: ['+84912', '+0912', '0912'], suffix: '0912' });
    expect(phoneSearch('+8491', 'VN')).toEqual({ exact: undefined, prefixes: ['+8491'], suffix: '8491' });
    expect(phoneSearch('0084 91', 'VN')).toEqual(expect.objectContaining({ prefixes: ['+8491'] }));
    expect(phoneSearch('678', 'VN')).toEqual({ exact: undefined, prefixes: ['+84678', '+678', '678'], suffix: undefined });
  });

  it('leaves terms that are not phone-like to the text search', () => {
    expect(phoneSearch('nguyen', 'VN')).toBeUndefined();
    expect(phoneSearch('an.123', 'VN')).toBeUndefined();
    expect(phoneSearch('12', 'VN')).toBeUndefined();
  });
});
