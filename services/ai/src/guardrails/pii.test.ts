import { kindOfNumber, PiiVault, redact, restore } from './pii';

// What leaves for an outside provider (issue #32 item 6): phones in Vietnamese and international formats, emails and
// Vietnamese ID numbers become placeholders, and the answer gets them back; numbers that are not personal stay.
describe('PII redaction', () => {
  const hidden: Array<[string, string]> = [
    ['Gọi em số 0901234567 nhé', '0901234567'],
    ['sdt: 0901 234 567', '0901 234 567'],
    ['so dt 090.123.4567 a', '090.123.4567'],
    ['zalo 0912-345-678', '0912-345-678'],
    ['số bàn 028 3822 1234', '028 3822 1234'],
    ['call +84 901 234 567', '+84 901 234 567'],
    ['call +84901234567', '+84901234567'],
    ['my number is 84901234567', '84901234567'],
    ['US office +1 (415) 555-0100', '+1 (415) 555-0100'],
    ['UK +44 20 7946 0958', '+44 20 7946 0958'],
    ['mail me at an.nguyen+shop@example.com.vn thanks', 'an.nguyen+shop@example.com.vn'],
    ['CMND 123456789', '123456789'],
    ['CCCD của tôi là 001099012345', '001099012345'],
  ];

  it.each(hidden)('hides %j', (text, value) => {
    const vault = new PiiVault();
    const out = redact(text, vault);
    expect(out).not.toContain(value);
    expect(out).toMatch(/\[(PHONE|EMAIL|ID)_1\]/);
    expect(restore(out, vault)).toBe(text);
  });

  it.each(['Giá 15.000.000đ, giảm 10%', 'order 2025-03-01 at 10:30', 'size 38, 2 cái', 'mã đơn DH12345678', 'total 1,250,000 VND'])(
    'leaves %j as it is',
    (text) => {
      const vault = new PiiVault();
      expect(redact(text, vault)).toBe(text);
      expect(vault.size).toBe(0);
    },
  );

  it('gives one value one placeholder, restores what the model wrote back in any case, and keeps unknown ones', () => {
    const vault = new PiiVault();
    const out = redact('0901234567 or 0901234567, else a@b.co or 0987654321', vault);
    expect(out).toBe('[PHONE_1] or [PHONE_1], else [EMAIL_1] or [PHONE_2]');
    expect(restore('We will call [phone_1] then [PHONE 2] and write to [EMAIL_1]; [ID_9] is unknown', vault)).toBe(
      'We will call 0901234567 then 0987654321 and write to a@b.co; [ID_9] is unknown',
    );
  });

  it('classifies runs by their digits', () => {
    expect(kindOfNumber('0901234567')).toBe('PHONE');
    expect(kindOfNumber('02838221234')).toBe('PHONE');
    expect(kindOfNumber('+4915123456789')).toBe('PHONE');
    expect(kindOfNumber('123456789')).toBe('ID');
    expect(kindOfNumber('001099012345')).toBe('ID');
    expect(kindOfNumber('12345678')).toBeUndefined();
    expect(kindOfNumber('15.000.000')).toBeUndefined();
  });
});
