import { isUuid } from './uuid';

describe('isUuid', () => {
  it('takes any-case UUIDs only', () => {
    expect(isUuid('7F3E1C52-0B4A-4C1E-9D2F-1A2B3C4D5E6F')).toBe(true);
    expect(isUuid('7f3e1c52-0b4a-4c1e-9d2f-1a2b3c4d5e6f')).toBe(true);
    for (const bad of [undefined, null, '', 'abc', '7f3e1c52-0b4a-4c1e-9d2f-1a2b3c4d5e6', '7f3e1c52-0b4a-4c1e-9d2f-1a2b3c4d5e6f\n', "' OR 1=1 --"]) {
      expect(isUuid(bad)).toBe(false);
    }
  });
});
