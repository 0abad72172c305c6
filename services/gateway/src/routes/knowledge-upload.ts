import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { knowledgeRules } from '@crm/validation';
import { badRequest, HttpError } from '../http/errors';

/** A knowledge-base upload: the file's bytes, name and declared type, and the form's optional title. */
export interface KnowledgeUpload {
  file: Buffer;
  fileName: string;
  contentType: string;
  title: string;
}

const fileProblem = (message: string) => badRequest([{ field: 'file', message }]);
const MB = knowledgeRules.FILE_MAX_BYTES / (1024 * 1024);

export const isMultipart = (req: IncomingMessage) => /^multipart\/form-data\b/i.test(req.headers['content-type'] ?? '');

/**
 * Reads a multipart/form-data upload whole (it is at most FILE_MAX_BYTES): the part named `file`, and a `title`
 * field. A file past the limit is a 413 naming `file` as soon as the limit is reached (the rest is read and dropped).
 */
export function readKnowledgeUpload(req: IncomingMessage): Promise<KnowledgeUpload> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      // One byte past the limit: busboy reports the limit when it is reached, so a file of exactly the limit is whole.
      parser = busboy({
        headers: req.headers,
        defParamCharset: 'utf8',
        limits: { files: 1, fileSize: knowledgeRules.FILE_MAX_BYTES + 1, fields: 5, fieldSize: 4096, parts: 10 },
      });
    } catch {
      return reject(fileProblem('the upload could not be read as multipart/form-data'));
    }
    let done = false;
    const fail = (err: Error) => {
      if (done) return;
      done = true;
      // Whatever is left of the request is read and dropped, so the client gets its answer on a healthy connection.
      req.unpipe(parser);
      req.resume();
      reject(err);
    };
    let title = '';
    let file: { chunks: Buffer[]; name: string; type: string; ended: Promise<void> } | undefined;
    parser.on('field', (name, value) => {
      if (name === 'title') title = value;
    });
    parser.on('file', (name, stream, info) => {
      if (name !== 'file' || file) return stream.resume();
      const chunks: Buffer[] = [];
      const ended = new Promise<void>((ok) => stream.on('end', ok));
      file = { chunks, name: info.filename ?? '', type: info.mimeType ?? '', ended };
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.once('limit', () =>
        fail(new HttpError(413, 'payload_too_large', `file: must be at most ${MB} MB`, [{ field: 'file', message: `must be at most ${MB} MB` }])),
      );
    });
    parser.on('error', () => fail(fileProblem('the upload could not be read as multipart/form-data')));
    parser.on('close', () => {
      if (done) return;
      if (!file) return fail(fileProblem('is required (multipart/form-data, field named file)'));
      const f = file;
      void f.ended.then(() => {
        if (done) return;
        done = true;
        resolve({ file: Buffer.concat(f.chunks), fileName: f.name, contentType: f.type, title });
      });
    });
    req.pipe(parser);
  });
}
