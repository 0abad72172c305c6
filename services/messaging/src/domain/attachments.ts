import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AppError, CallContext, invalid, notFound, requireCan, requireOrg } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import * as files from '../db/attachments.repo';
import { isUuid } from './validation';

const MIME = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/;

/** The name a user gave the file, made safe to echo back (never used as a path: bytes are stored by id). */
export function cleanFilename(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  const clean = base.replace(/[\u0000-\u001f\u007f"]/g, '').trim().slice(0, 255);
  return clean || 'file';
}

/** Bytes live under ATTACHMENTS_DIR/<org>/<id>: no user input ever reaches the path. */
function fileOf(deps: Deps, orgId: string, id: string): string {
  return path.join(deps.config.ATTACHMENTS_DIR, orgId, id);
}

export async function upload(deps: Deps, ctx: CallContext, req: { filename?: string; contentType?: string; data?: Buffer }) {
  requireCan(ctx, 'conversations:write');
  const orgId = ctx.orgId;
  const data = req.data ?? Buffer.alloc(0);
  if (data.length === 0) throw invalid('file', 'is required and must not be empty');
  if (data.length > deps.config.ATTACHMENT_MAX_BYTES) {
    throw new AppError('payload_too_large', `Attachments are limited to ${Math.floor(deps.config.ATTACHMENT_MAX_BYTES / 1048576)} MB`);
  }
  const contentType = MIME.test(req.contentType ?? '') ? req.contentType!.toLowerCase() : 'application/octet-stream';
  const id = randomUUID();
  const target = fileOf(deps, orgId, id);
  await mkdir(path.dirname(target), { recursive: true });
  // Written under a temporary name and renamed, so a reader never sees half a file.
  await writeFile(`${target}.part`, data);
  await rename(`${target}.part`, target);
  try {
    const row = await files.insert(deps.pool, {
      id,
      orgId,
      filename: cleanFilename(req.filename),
      contentType,
      size: data.length,
      uploadedBy: isUuid(ctx.userId) ? ctx.userId : null,
    });
    return files.toAttachment(row);
  } catch (err) {
    await unlink(target).catch(() => undefined);
    throw err;
  }
}

export async function download(deps: Deps, ctx: CallContext, id: string) {
  const orgId = requireOrg(ctx);
  const row = isUuid(id) ? await files.findById(deps.pool, orgId, id) : undefined;
  if (!row) throw notFound('Attachment');
  let data: Buffer;
  try {
    data = await readFile(fileOf(deps, orgId, id));
  } catch (err) {
    deps.log.error({ err, attachmentId: id }, 'attachment bytes missing from ATTACHMENTS_DIR');
    throw notFound('Attachment');
  }
  return { attachment: files.toAttachment(row), data };
}
