import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import { AppError, invalid } from '@crm/grpc-kit';
import { type ReceivedUpload, SNIFF_BYTES, TextCheck } from '../attachments';

/**
 * One file as it arrived: written to `tempPath` (up to `keepBytes`), measured and hashed on the way. `size`
 * counts every byte the client sent for the file, including any past `keepBytes` (those were not written).
 */
export type ReceivedFile = ReceivedUpload;

export interface ReceiveOptions {
  /** The form field that must carry the file. */
  field: string;
  tempPath: string;
  /** Bytes written to disk at most; past it the rest of the file is read and dropped, so the client gets an answer. */
  keepBytes: number;
  /**
   * Bytes of the whole request parsed at most (a client streaming without end): past it the upload is refused unread,
   * and the answer closes the connection after a bounded linger (the server's lingeringClose).
   */
  hardCapBytes: number;
  /** The answer past the hard cap: the same 413 a file just past the size limit gets, naming the limit. */
  tooLarge(): AppError;
}

/**
 * Browsers (WHATWG FormData) escape LF, CR and `"` in field and file names as %0A, %0D, %22, and busboy leaves
 * them escaped. Only those three are reversed: a bare `%` is never escaped, so `50%.pdf` must stay as it is.
 */
const FORM_ESCAPES: Record<string, string> = { '%0A': '\n', '%0D': '\r', '%22': '"' };
export function decodeFormDataName(name: string): string {
  return name.replace(/%0A|%0D|%22/gi, (m) => FORM_ESCAPES[m.toUpperCase()]);
}

const notMultipart = () => invalid('file', 'the upload could not be read as multipart/form-data');
const oneFile = () => invalid('file', 'send one file in the form field named file');

/**
 * Read a multipart upload of one file straight to disk, never holding it whole in memory. Resolves once the
 * whole request is read; rejects with an AppError (and no file left behind) for a malformed form, another
 * field name, several files, a client that went away, or a request past the hard cap (`tooLarge`, its body left unread).
 */
export function receiveFile(req: IncomingMessage, opts: ReceiveOptions): Promise<ReceivedFile> {
  let parser: busboy.Busboy;
  try {
    // Browsers send names as raw UTF-8 (busboy's default would read them as Latin-1).
    parser = busboy({ headers: req.headers, defParamCharset: 'utf8', limits: { files: 1, fields: 20, parts: 30, fieldSize: 64 * 1024 } });
  } catch {
    return Promise.reject(notMultipart());
  }

  return new Promise<ReceivedFile>((resolve, reject) => {
    const abort = new AbortController();
    let problem: AppError | undefined;
    let writing: Promise<ReceivedFile | undefined> | undefined;
    let settled = false;
    let requestBytes = 0;

    const settle = async () => {
      if (settled) return;
      settled = true;
      const file = await writing;
      if (problem || !file) {
        await unlink(opts.tempPath).catch(() => undefined);
        return reject(problem ?? invalid('file', 'is required (multipart/form-data, field named file)'));
      }
      resolve(file);
    };
    const fail = (err: AppError) => {
      problem ??= err;
    };

    parser.on('file', (name, stream, info) => {
      if (decodeFormDataName(name) !== opts.field || writing) {
        fail(oneFile());
        stream.resume();
        return;
      }
      writing = writeFile(stream, info, opts, abort.signal).catch((err) => {
        fail(err instanceof AppError ? err : new AppError('invalid_argument', 'The upload was interrupted', { code: 'upload_aborted' }));
        return undefined;
      });
    });
    parser.on('filesLimit', () => fail(oneFile()));
    parser.on('partsLimit', () => fail(invalid('file', 'the form has too many parts')));
    parser.on('fieldsLimit', () => fail(invalid('file', 'the form has too many fields')));
    parser.on('error', () => {
      fail(notMultipart());
      req.unpipe(parser);
      abort.abort();
      req.resume();
      void settle();
    });
    parser.on('close', () => void settle());

    req.on('data', (chunk: Buffer) => {
      requestBytes += chunk.length;
      if (requestBytes > opts.hardCapBytes && !settled) {
        fail(opts.tooLarge());
        req.unpipe(parser);
        abort.abort();
        void settle();
      }
    });
    req.on('close', () => {
      if (!req.complete && !settled) {
        fail(new AppError('invalid_argument', 'The upload was interrupted', { code: 'upload_aborted' }));
        abort.abort();
        void settle();
      }
    });
    req.pipe(parser);
  });
}

/** Stream one file part to disk through a meter that counts, hashes, keeps the first bytes and checks for text. */
async function writeFile(stream: NodeJS.ReadableStream, info: busboy.FileInfo, opts: ReceiveOptions, signal: AbortSignal): Promise<ReceivedFile> {
  const hash = createHash('sha256');
  const text = new TextCheck();
  let size = 0;
  let head = Buffer.alloc(0);
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      const before = size;
      size += chunk.length;
      if (size > opts.keepBytes) {
        // Over the limit: keep reading so the client gets a clean answer, but write and hash nothing more.
        if (before <= opts.keepBytes) this.push(chunk.subarray(0, opts.keepBytes - before));
        return done();
      }
      hash.update(chunk);
      text.update(chunk);
      if (head.length < SNIFF_BYTES) head = Buffer.concat([head, chunk.subarray(0, SNIFF_BYTES - head.length)]);
      done(null, chunk);
    },
  });
  await pipeline(stream, meter, createWriteStream(opts.tempPath, { flags: 'wx', mode: 0o640 }), { signal });
  return {
    filename: decodeFormDataName(info.filename ?? ''),
    declaredType: (info.mimeType ?? '').toLowerCase(),
    size,
    sha256: hash.digest('hex'),
    head,
    looksLikeText: text.text,
    tempPath: opts.tempPath,
  };
}
