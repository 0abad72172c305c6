/**
 * Does a file's content match what the uploader says it is? The declared type (and the file name's
 * extension) are claims; the first bytes are evidence. A claim of a type that has a signature (PNG, PDF,
 * ZIP-based Office files, MP4, ...) must be backed by that signature; a claim of a text type must be backed
 * by bytes that read as text; an executable passes only as an executable or as an untyped download.
 * Everything is served with nosniff, so this guards recipients who open a "photo" that is really a program.
 */

/** What the first bytes say, by family. */
export type Signature =
  | 'png'
  | 'jpeg'
  | 'gif'
  | 'webp'
  | 'bmp'
  | 'tiff'
  | 'ico'
  | 'pdf'
  | 'zip'
  | 'ole'
  | 'gzip'
  | '7z'
  | 'rar'
  | 'mp3'
  | 'aac'
  | 'wav'
  | 'avi'
  | 'ogg'
  | 'flac'
  | 'amr'
  | 'ftyp'
  | 'quicktime'
  | 'ebml'
  | 'exe'
  | 'elf'
  | 'macho';

/** Bytes needed to recognise every signature below. */
export const SNIFF_BYTES = 64;

const starts = (b: Buffer, hex: string, at = 0) => {
  const sig = Buffer.from(hex, 'hex');
  return b.length >= at + sig.length && b.subarray(at, at + sig.length).equals(sig);
};
const ascii = (b: Buffer, text: string, at = 0) => b.length >= at + text.length && b.toString('latin1', at, at + text.length) === text;

const SIGNATURES: [Signature, (b: Buffer) => boolean][] = [
  ['png', (b) => starts(b, '89504e470d0a1a0a')],
  ['jpeg', (b) => starts(b, 'ffd8ff')],
  ['gif', (b) => ascii(b, 'GIF87a') || ascii(b, 'GIF89a')],
  ['webp', (b) => ascii(b, 'RIFF') && ascii(b, 'WEBP', 8)],
  ['wav', (b) => ascii(b, 'RIFF') && ascii(b, 'WAVE', 8)],
  ['avi', (b) => ascii(b, 'RIFF') && ascii(b, 'AVI ', 8)],
  ['bmp', (b) => ascii(b, 'BM') && b.length >= 14],
  ['tiff', (b) => starts(b, '49492a00') || starts(b, '4d4d002a')],
  ['ico', (b) => starts(b, '00000100')],
  ['pdf', (b) => ascii(b, '%PDF-')],
  ['zip', (b) => starts(b, '504b0304') || starts(b, '504b0506') || starts(b, '504b0708')],
  ['ole', (b) => starts(b, 'd0cf11e0a1b11ae1')],
  ['gzip', (b) => starts(b, '1f8b')],
  ['7z', (b) => starts(b, '377abcaf271c')],
  ['rar', (b) => ascii(b, 'Rar!\x1a\x07')],
  ['mp3', (b) => ascii(b, 'ID3') || (b.length >= 2 && b[0] === 0xff && (b[1] & 0xe6) === 0xe2)],
  ['aac', (b) => b.length >= 2 && b[0] === 0xff && (b[1] & 0xf6) === 0xf0],
  ['ogg', (b) => ascii(b, 'OggS')],
  ['flac', (b) => ascii(b, 'fLaC')],
  ['amr', (b) => ascii(b, '#!AMR')],
  ['ftyp', (b) => ascii(b, 'ftyp', 4)],
  ['quicktime', (b) => ['moov', 'mdat', 'wide', 'free', 'skip'].some((box) => ascii(b, box, 4))],
  ['ebml', (b) => starts(b, '1a45dfa3')],
  ['exe', (b) => ascii(b, 'MZ')],
  ['elf', (b) => starts(b, '7f454c46')],
  ['macho', (b) => ['feedface', 'feedfacf', 'cefaedfe', 'cffaedfe', 'cafebabe'].some((m) => starts(b, m))],
];

export function sniff(head: Buffer): Signature | undefined {
  return SIGNATURES.find(([, test]) => test(head))?.[0];
}

const EXECUTABLE: ReadonlySet<Signature> = new Set(['exe', 'elf', 'macho']);
const MP4: Signature[] = ['ftyp', 'quicktime'];

/** Types whose files always start with one of these signatures. */
const EXPECTED: Record<string, Signature[]> = {
  'image/png': ['png'],
  'image/apng': ['png'],
  'image/jpeg': ['jpeg'],
  'image/jpg': ['jpeg'],
  'image/pjpeg': ['jpeg'],
  'image/gif': ['gif'],
  'image/webp': ['webp'],
  'image/bmp': ['bmp'],
  'image/x-ms-bmp': ['bmp'],
  'image/tiff': ['tiff'],
  'image/x-icon': ['ico'],
  'image/vnd.microsoft.icon': ['ico'],
  'image/heic': ['ftyp'],
  'image/heif': ['ftyp'],
  'image/avif': ['ftyp'],
  'application/pdf': ['pdf'],
  'application/zip': ['zip'],
  'application/x-zip-compressed': ['zip'],
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': ['zip'],
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': ['zip'],
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': ['zip'],
  'application/vnd.oasis.opendocument.text': ['zip'],
  'application/vnd.oasis.opendocument.spreadsheet': ['zip'],
  'application/vnd.oasis.opendocument.presentation': ['zip'],
  'application/epub+zip': ['zip'],
  'application/msword': ['ole'],
  'application/vnd.ms-excel': ['ole'],
  'application/vnd.ms-powerpoint': ['ole'],
  'application/gzip': ['gzip'],
  'application/x-gzip': ['gzip'],
  'application/x-7z-compressed': ['7z'],
  'application/vnd.rar': ['rar'],
  'application/x-rar-compressed': ['rar'],
  'audio/mpeg': ['mp3'],
  'audio/mp3': ['mp3'],
  'audio/aac': ['aac', 'ftyp'],
  'audio/wav': ['wav'],
  'audio/wave': ['wav'],
  'audio/x-wav': ['wav'],
  'audio/ogg': ['ogg'],
  'audio/opus': ['ogg'],
  'application/ogg': ['ogg'],
  'video/ogg': ['ogg'],
  'audio/flac': ['flac'],
  'audio/x-flac': ['flac'],
  'audio/amr': ['amr'],
  'audio/mp4': ['ftyp'],
  'audio/m4a': ['ftyp'],
  'audio/x-m4a': ['ftyp'],
  'audio/webm': ['ebml'],
  'video/webm': ['ebml'],
  'video/x-matroska': ['ebml'],
  'video/mp4': MP4,
  'video/x-m4v': MP4,
  'video/quicktime': MP4,
  'video/3gpp': MP4,
  'video/3gpp2': MP4,
  'video/x-msvideo': ['avi'],
  'application/x-msdownload': ['exe'],
  'application/x-dosexec': ['exe'],
  'application/vnd.microsoft.portable-executable': ['exe'],
};

/** Extensions that name a type, so `photo.png` sent as application/octet-stream is still held to PNG. */
const BY_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  jfif: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  bmp: 'image/bmp',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  ico: 'image/x-icon',
  heic: 'image/heic',
  heif: 'image/heif',
  avif: 'image/avif',
  pdf: 'application/pdf',
  zip: 'application/zip',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
  odp: 'application/vnd.oasis.opendocument.presentation',
  epub: 'application/epub+zip',
  doc: 'application/msword',
  xls: 'application/vnd.ms-excel',
  ppt: 'application/vnd.ms-powerpoint',
  gz: 'application/gzip',
  '7z': 'application/x-7z-compressed',
  rar: 'application/vnd.rar',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  oga: 'audio/ogg',
  opus: 'audio/opus',
  flac: 'audio/flac',
  amr: 'audio/amr',
  m4a: 'audio/mp4',
  weba: 'audio/webm',
  webm: 'video/webm',
  mkv: 'video/x-matroska',
  mp4: 'video/mp4',
  m4v: 'video/x-m4v',
  mov: 'video/quicktime',
  '3gp': 'video/3gpp',
  avi: 'video/x-msvideo',
  exe: 'application/x-msdownload',
  dll: 'application/x-msdownload',
  txt: 'text/plain',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  md: 'text/markdown',
  log: 'text/plain',
  html: 'text/html',
  htm: 'text/html',
  css: 'text/css',
  xml: 'application/xml',
  json: 'application/json',
  svg: 'image/svg+xml',
  ics: 'text/calendar',
  vcf: 'text/vcard',
};

const TEXT_APPLICATION = new Set(['application/json', 'application/xml', 'application/javascript', 'application/x-ndjson', 'image/svg+xml']);
const isTextType = (t: string) => t.startsWith('text/') || TEXT_APPLICATION.has(t) || t.endsWith('+json') || t.endsWith('+xml');

/** The types an upload claims to be: its declared type unless untyped, and its extension's type. */
export function claimedTypes(declared: string, filename: string): string[] {
  const out = new Set<string>();
  if (declared && declared !== 'application/octet-stream') out.add(declared);
  const ext = /\.([A-Za-z0-9]{1,8})$/.exec(filename)?.[1]?.toLowerCase();
  if (ext && BY_EXTENSION[ext]) out.add(BY_EXTENSION[ext]);
  return [...out];
}

/**
 * Whether bytes read as text, fed in chunks: no NUL or other C0 control bytes besides tab, line breaks,
 * form feed and escape. Legacy 8-bit encodings pass (Windows-1258 exports are common); UTF-16 needs its BOM.
 */
export class TextCheck {
  private seen = 0;
  private utf16 = false;
  text = true;

  update(chunk: Buffer): void {
    if (!this.text || this.utf16) return;
    if (this.seen === 0 && (starts(chunk, 'fffe') || starts(chunk, 'feff'))) {
      this.utf16 = true;
      return;
    }
    this.seen += chunk.length;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i];
      if (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0b && c !== 0x0c && c !== 0x0d && c !== 0x1b) {
        this.text = false;
        return;
      }
    }
  }
}

/** Why the bytes contradict the claims, or undefined when they agree. */
export function contentMismatch(claims: string[], head: Buffer, looksLikeText: boolean): string | undefined {
  const found = sniff(head);
  for (const claim of claims) {
    const expected = EXPECTED[claim];
    if (expected && !(found && expected.includes(found))) {
      return found ? `the file's content is ${describe(found)}, not ${claim}` : `the file's content is not ${claim}`;
    }
    if (!expected && isTextType(claim) && (!looksLikeText || (found && EXECUTABLE.has(found)))) {
      return `the file's content is not text, so it cannot be ${claim}`;
    }
  }
  const notAProgram = found && EXECUTABLE.has(found) ? claims.find((c) => !EXPECTED[c]?.includes(found)) : undefined;
  if (notAProgram) return `the file's content is ${describe(found!)}, not ${notAProgram}`;
  return undefined;
}

function describe(s: Signature): string {
  switch (s) {
    case 'exe':
      return 'a Windows executable';
    case 'elf':
      return 'a Linux executable';
    case 'macho':
      return 'a macOS executable';
    case 'ftyp':
    case 'quicktime':
      return 'an MP4/QuickTime container';
    case 'ole':
      return 'a legacy Office document';
    case 'ebml':
      return 'a WebM/Matroska container';
    default:
      return `${s.toUpperCase()} data`;
  }
}
