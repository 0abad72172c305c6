import { randomUUID } from 'node:crypto';
import { mkdir, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { withTransaction } from '@crm/db';
import { sizeText } from '@crm/config';
import { AppError, invalid, notFound, requireCan, OrgContext } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import * as files from '../db/attachments.repo';
import { claimedTypes, contentMismatch } from './content-type';
import { isUuid } from '@crm/validation';
import { viewerOf } from './visibility';

const MIME = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/;
const MB = 1024 * 1024;

/** The name a user gave the file, made safe to echo back (never used as a path: bytes are stored by id). */
export function cleanFilename(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  const clean = base.replace(/[\u0000-\u001f\u007f"]/g, '').trim().slice(0, 255);
  return clean || 'file';
}

/** Bytes live under ATTACHMENTS_DIR/<org>/<id>: no user input ever reaches the path. */
export function fileOf(deps: Pick<Deps, 'config'>, orgId: string, id: string): string {
  // The org comes from a verified credential; checked anyway, since it becomes a folder name.
  if (!isUuid(orgId) || !isUuid(id)) throw new AppError('unauthenticated', 'No organization in the internal credential');
  return path.join(deps.config.ATTACHMENTS_DIR, orgId, id);
}

/** The answer to a file past ATTACHMENT_MAX_BYTES, naming the limit (a limit that is not whole MB is not rounded to one). */
export const tooLarge = (deps: Pick<Deps, 'config'>) => new AppError('payload_too_large', `Attachments are limited to ${sizeText(deps.config.ATTACHMENT_MAX_BYTES)}`);
const quotaExceeded = (deps: Deps) =>
  new AppError('payload_too_large', `Your organization's attachment storage (${deps.config.ATTACHMENTS_QUOTA_MB} MB) is full; sent files are kept, unsent uploads expire`, {
    code: 'storage_quota_exceeded',
  });

/** What an upload in progress needs to know before its first byte: where to write and how much to keep. */
export interface UploadPlan {
  orgId: string;
  id: string;
  tempPath: string;
  /** Bytes the file may have: the size limit or the space left in the org's quota, whichever is smaller. */
  keepBytes: number;
  quotaLeft: number;
}

/** Checked before the body is read, so a caller without the right or without space sends nothing for nothing. */
export async function planUpload(deps: Deps, ctx: OrgContext): Promise<UploadPlan> {
  // The connector stores the files contacts send, for the org and with no user or role; users need the right.
  if (ctx.caller !== 'connector') requireCan(ctx, 'conversations:write');
  const { orgId } = ctx;
  const quotaLeft = deps.config.ATTACHMENTS_QUOTA_MB * MB - (await files.storedBytes(deps.pool, orgId));
  const id = randomUUID();
  const tempPath = `${fileOf(deps, orgId, id)}.part`;
  await mkdir(path.dirname(tempPath), { recursive: true });
  return { orgId, id, tempPath, keepBytes: Math.max(0, Math.min(deps.config.ATTACHMENT_MAX_BYTES, quotaLeft)), quotaLeft };
}

export interface ReceivedUpload {
  filename: string;
  declaredType: string;
  size: number;
  sha256: string;
  head: Buffer;
  looksLikeText: boolean;
  tempPath: string;
}

/**
 * Keep a fully received file: size, content and quota checked, then the row recorded and the file moved into
 * place in one transaction. Any refusal removes the temporary file, so nothing of a refused upload stays.
 */
export async function completeUpload(deps: Deps, ctx: OrgContext, plan: UploadPlan, file: ReceivedUpload) {
  try {
    if (file.size === 0) throw invalid('file', 'is required and must not be empty');
    if (file.size > deps.config.ATTACHMENT_MAX_BYTES) throw tooLarge(deps);
    if (file.size > plan.quotaLeft) throw quotaExceeded(deps);
    const filename = cleanFilename(file.filename);
    const contentType = MIME.test(file.declaredType) ? file.declaredType : 'application/octet-stream';
    const mismatch = contentMismatch(claimedTypes(contentType, filename), file.head, file.looksLikeText);
    if (mismatch) throw new AppError('invalid_argument', `file: ${mismatch}`, { code: 'content_type_mismatch', details: [{ field: 'file', message: mismatch }] });

    const target = fileOf(deps, plan.orgId, plan.id);
    const row = await withTransaction(deps.pool, async (tx) => {
      // Checked again under the org's lock: uploads finishing together must not overrun the quota between them.
      await files.lockOrgStorage(tx, plan.orgId);
      if ((await files.storedBytes(tx, plan.orgId)) + file.size > deps.config.ATTACHMENTS_QUOTA_MB * MB) throw quotaExceeded(deps);
      const inserted = await files.insert(tx, {
        id: plan.id,
        orgId: plan.orgId,
        filename,
        contentType,
        size: file.size,
        sha256: file.sha256,
        uploadedBy: isUuid(ctx.userId) ? ctx.userId : null,
      });
      // Renamed before the commit: a row never points at a missing file; a failed commit removes it below.
      await rename(file.tempPath, target);
      return inserted;
    }).catch(async (err) => {
      await unlink(target).catch(() => undefined);
      throw err;
    });
    return files.toAttachment(row);
  } finally {
    await unlink(file.tempPath).catch(() => undefined);
  }
}

/** Drop what a refused or broken upload left on disk. */
export async function abandonUpload(plan: UploadPlan): Promise<void> {
  await unlink(plan.tempPath).catch(() => undefined);
}

/**
 * The row and on-disk location of one of the caller's org's attachments that the caller may see (inbox visibility:
 * an agent limited to their conversations gets 404 for a file sent in someone else's); 404 for anything else.
 */
export async function locate(deps: Deps, ctx: OrgContext, id: string) {
  const { orgId } = ctx;
  const row = isUuid(id) ? await files.findVisible(deps.pool, orgId, id, viewerOf(ctx)) : undefined;
  if (!row) throw notFound('Attachment');
  const location = fileOf(deps, orgId, id);
  try {
    const { size } = await stat(location);
    return { row, location, size };
  } catch (err) {
    deps.log.error({ err, attachmentId: id }, 'attachment bytes missing from ATTACHMENTS_DIR');
    throw notFound('Attachment');
  }
}
