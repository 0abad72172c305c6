import { fallbackName } from './network-name';

describe('fallbackName', () => {
  it('is never the bare uid, and tells two users apart by the end of their uid', () => {
    expect(fallbackName('8421930000000001234')).toBe('Chat user …1234');
    expect(fallbackName('8421930000000001234')).not.toBe('8421930000000001234');
    expect(fallbackName('u-1')).not.toBe(fallbackName('u-2'));
  });
});
