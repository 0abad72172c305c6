import { fileNameForNetwork, imageSize, mimeTypeOf } from './file-kinds';

describe('file kinds', () => {
  it('reads the size of PNG, GIF, JPEG and the three WebP flavours from their headers; {} for anything else', () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000280000001e0', 'hex');
    expect(imageSize(png)).toEqual({ width: 640, height: 480 });
    expect(imageSize(Buffer.from('474946383961c8006400', 'hex'))).toEqual({ width: 200, height: 100 });
    // An APP0 segment first, then the baseline frame header (SOF0).
    const jpeg = Buffer.from('ffd8ffe000104a46494600010100000100010000ffc0001108003c005003012200021101031101', 'hex');
    expect(imageSize(jpeg)).toEqual({ width: 80, height: 60 });
    const riff = (chunk: string, body: Buffer) => Buffer.concat([Buffer.from('RIFF\0\0\0\0WEBP' + chunk, 'latin1'), body]);
    expect(imageSize(riff('VP8X', Buffer.from('0a000000' + '00000000' + '3f0100' + 'ef0000', 'hex')))).toEqual({ width: 320, height: 240 });
    expect(imageSize(riff('VP8 ', Buffer.from('00000000' + '000000' + '9d012a' + '4001' + 'f000', 'hex')))).toEqual({ width: 320, height: 240 });
    // VP8L: 14 bits of width − 1, then 14 bits of height − 1, after the 0x2f signature byte.
    const bits = 319 | (239 << 14);
    const vp8l = Buffer.alloc(14);
    vp8l[4] = 0x2f;
    vp8l.writeUInt32LE(bits, 5);
    expect(imageSize(riff('VP8L', vp8l))).toEqual({ width: 320, height: 240 });
    expect(imageSize(Buffer.from('%PDF-1.7'))).toEqual({});
  });

  it('types a file by its extension and gives every name one (zca-js picks photo or file by it)', () => {
    expect(mimeTypeOf('Báo giá.PDF')).toBe('application/pdf');
    expect(mimeTypeOf('photo.jpeg')).toBe('image/jpeg');
    expect(mimeTypeOf('README')).toBe('application/octet-stream');
    expect(fileNameForNetwork('report.xlsx', 'application/pdf')).toBe('report.xlsx');
    expect(fileNameForNetwork('scan', 'image/png')).toBe('scan.png');
    expect(fileNameForNetwork('blob', 'application/x-unknown')).toBe('blob.bin');
  });
});
