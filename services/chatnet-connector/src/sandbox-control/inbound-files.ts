import { AppError, invalid } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import type { StoredAttachment } from '../drivers';
import { FileTransferError, type FileToStore } from '../files';
import { MAX_FILES } from '../messages';

/** A file of a sandbox push, checked and decoded. */
export interface PushedFile {
  fileName: string;
  mimeType: string;
  bytes: Buffer;
}

const MIME = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/;
/** Standard base64 with its padding, nothing else (no line breaks, no URL alphabet). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The name a sender gave a file, made safe to show (never a path: messaging stores bytes by id). Same rule as messaging's. */
export function cleanFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  return base
    .replace(/[\u0000-\u001f\u007f"]/g, '')
    .trim()
    .slice(0, 255);
}

/** Bytes a base64 text decodes to, without decoding it. */
const decodedLength = (b64: string) => (b64.length / 4) * 3 - (b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0);

/** The files of a sandbox push: at most 10, each named, typed and in base64 of 1 byte up to the attachment limit. */
export function pushedFilesOf(list: Array<{ fileName?: string; mimeType?: string; contentBase64?: string }>, maxBytes: number): PushedFile[] {
  if (list.length > MAX_FILES) throw invalid('attachments', `at most ${MAX_FILES} files per message`);
  return list.map((f, i) => {
    const fileName = cleanFileName(f.fileName ?? '');
    if (!fileName) throw invalid(`attachments.${i}.fileName`, 'is required');
    const mimeType = (f.mimeType ?? '').trim().toLowerCase();
    if (!MIME.test(mimeType)) throw invalid(`attachments.${i}.mimeType`, 'must be a media type such as image/png');
    const b64 = f.contentBase64 ?? '';
    if (!b64) throw invalid(`attachments.${i}.contentBase64`, 'is required and must not be empty');
    if (!BASE64.test(b64)) throw invalid(`attachments.${i}.contentBase64`, 'must be standard base64');
    if (decodedLength(b64) > maxBytes) throw invalid(`attachments.${i}.contentBase64`, `must decode to at most ${maxBytes} bytes`);
    return { fileName, mimeType, bytes: Buffer.from(b64, 'base64') };
  });
}

/**
 * Store received files in messaging, one after another, before their message is announced. messaging checks each
 * file's content against its type (400 naming the file's `mimeType`) and the org's storage quota (413). Files
 * stored before a refusal stay unlinked and go with messaging's orphan sweep.
 */
export async function storeFiles(deps: Pick<Deps, 'files'>, orgId: string, files: PushedFile[], requestId = ''): Promise<StoredAttachment[]> {
  const stored: StoredAttachment[] = [];
  for (const [i, f] of files.entries()) {
    const file: FileToStore = { fileName: f.fileName, mimeType: f.mimeType, body: f.bytes };
    try {
      stored.push(await deps.files.store(orgId, file, requestId));
    } catch (err) {
      throw refusedFile(err, i);
    }
  }
  return stored;
}

function refusedFile(err: unknown, i: number): AppError {
  if (!(err instanceof FileTransferError))
    return new AppError('unavailable', 'The file could not be stored; try again', { code: 'file_store_failed' });
  if (err.code === 'content_type_mismatch') {
    const message = err.message.replace(/^file: /, '');
    return new AppError('invalid_argument', `attachments.${i}.mimeType: ${message}`, {
      code: 'content_type_mismatch',
      details: [{ field: `attachments.${i}.mimeType`, message }],
    });
  }
  if (err.code === 'storage_quota_exceeded') return new AppError('payload_too_large', err.message, { code: 'storage_quota_exceeded' });
  if (err.status === 413) return invalid(`attachments.${i}.contentBase64`, err.message);
  if (err.status === 400) return invalid(`attachments.${i}.contentBase64`, err.message.replace(/^file: /, ''));
  return new AppError('unavailable', 'The file could not be stored; try again', { code: 'file_store_failed' });
}
