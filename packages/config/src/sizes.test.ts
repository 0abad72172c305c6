import { sizeText } from './sizes';

describe('sizeText (a size setting in an error message)', () => {
  it.each([
    [64 * 1024 * 1024, '64 MB'],
    [25 * 1024 * 1024, '25 MB'],
    [512 * 1024, '512 KB'],
    [1500, '1500 bytes'],
  ])('%i bytes read as %s', (bytes, text) => {
    expect(sizeText(bytes)).toBe(text);
  });
});
