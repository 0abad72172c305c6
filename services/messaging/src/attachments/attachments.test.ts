import { cleanFilename } from './attachments';

describe('attachment file names', () => {
  it('keep what the user named the file, minus any path and control characters', () => {
    expect(cleanFilename('photo of shelf.png')).toBe('photo of shelf.png');
    expect(cleanFilename('../../etc/passwd')).toBe('passwd');
    expect(cleanFilename('C:\\Users\\me\\report.pdf')).toBe('report.pdf');
    expect(cleanFilename('a\u0000b\r\n"c".txt')).toBe('abc.txt');
  });

  it('fall back to "file" when nothing is left, and stay within 255 characters', () => {
    expect(cleanFilename('')).toBe('file');
    expect(cleanFilename('dir/')).toBe('file');
    expect(cleanFilename(undefined)).toBe('file');
    expect(cleanFilename('x'.repeat(400))).toHaveLength(255);
  });
});
