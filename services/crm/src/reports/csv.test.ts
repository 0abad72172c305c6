import { csvLine, numberCell, textCell } from './csv';

describe('report CSV cells', () => {
  it('quote commas, quotes and line breaks, doubling quotes', () => {
    expect(textCell('plain')).toBe('plain');
    expect(textCell('Lee, "Boss"')).toBe('"Lee, ""Boss"""');
    expect(textCell('two\nlines')).toBe('"two\nlines"');
    expect(textCell('cr\rhere')).toBe('"cr\rhere"');
    expect(textCell(null)).toBe('');
  });

  it('neutralise text that a spreadsheet would run as a formula', () => {
    expect(textCell('=HYPERLINK("http://x","y")')).toBe('"\'=HYPERLINK(""http://x"",""y"")"');
    expect(textCell('+1')).toBe("'+1");
    expect(textCell('-cmd')).toBe("'-cmd");
    expect(textCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(textCell('\tx')).toBe("'\tx");
    expect(textCell('a=b')).toBe('a=b');
  });

  it('write numbers as given and lines with CRLF', () => {
    expect(numberCell('1234.50')).toBe('1234.50');
    expect(numberCell(0)).toBe('0');
    expect(numberCell(null)).toBe('');
    expect(csvLine(['a', '"b,c"', ''])).toBe('a,"b,c",\r\n');
  });
});
