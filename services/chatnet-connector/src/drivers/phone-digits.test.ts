import { networkPhoneDigits } from './phone-digits';

describe('networkPhoneDigits', () => {
  it('reads every Vietnamese spelling of one number as one', () => {
    for (const spelling of ['0912345678', '+84912345678', '84 912 345 678', '0084 912-345-678', '(+84) 912.345.678']) {
      expect(networkPhoneDigits(spelling)).toBe('84912345678');
    }
  });
  it('keeps numbers of other countries as their digits', () => {
    expect(networkPhoneDigits('+1 415 555 0100')).toBe('14155550100');
  });
});
