/**
 * What a network client needs to know of a file beyond its bytes: its type from its name (a network names files,
 * it seldom types them), a name with an extension (zca-js picks photo, video or file by it) and a photo's size.
 */

const BY_EXTENSION: Record<string, string> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  pdf: 'application/pdf',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ppt: 'application/vnd.ms-powerpoint',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  zip: 'application/zip',
  rar: 'application/vnd.rar',
  txt: 'text/plain',
  csv: 'text/csv',
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
  mp4: 'video/mp4',
  mov: 'video/quicktime',
};

const extensionOf = (name: string) => /\.([A-Za-z0-9]{1,8})$/.exec(name)?.[1]?.toLowerCase();

/** The type a file name says; untyped (application/octet-stream) when its extension is unknown or missing. */
export function mimeTypeOf(fileName: string): string {
  return BY_EXTENSION[extensionOf(fileName) ?? ''] ?? 'application/octet-stream';
}

/** The file's name with an extension, added from its type when it has none (`bin` when the type names none either). */
export function fileNameForNetwork(fileName: string, mimeType: string): `${string}.${string}` {
  if (extensionOf(fileName)) return fileName as `${string}.${string}`;
  const ext = Object.entries(BY_EXTENSION).find(([, type]) => type === mimeType)?.[0] ?? 'bin';
  return `${fileName || 'file'}.${ext}`;
}

/** Width and height of a PNG, GIF, JPEG or WebP image from its header; {} for anything else. */
export function imageSize(b: Buffer): { width?: number; height?: number } {
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47) return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  if (b.length >= 10 && b.toString('latin1', 0, 4) === 'GIF8') return { width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
  if (b.length >= 30 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return webpSize(b);
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) return jpegSize(b);
  return {};
}

function webpSize(b: Buffer): { width?: number; height?: number } {
  switch (b.toString('latin1', 12, 16)) {
    case 'VP8X':
      return { width: 1 + b.readUIntLE(24, 3), height: 1 + b.readUIntLE(27, 3) };
    case 'VP8 ':
      return { width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
    case 'VP8L': {
      const bits = b.readUInt32LE(21);
      return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >> 14) & 0x3fff) };
    }
    default:
      return {};
  }
}

/** Walks the JPEG segments to the first start-of-frame marker, which holds the dimensions. */
function jpegSize(b: Buffer): { width?: number; height?: number } {
  let at = 2;
  while (at + 9 < b.length) {
    if (b[at] !== 0xff) return {};
    const marker = b[at + 1];
    const length = b.readUInt16BE(at + 2);
    // SOF0–SOF15, except DHT (C4), JPG (C8) and DAC (CC), which share the range.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: b.readUInt16BE(at + 5), width: b.readUInt16BE(at + 7) };
    }
    at += 2 + length;
  }
  return {};
}
