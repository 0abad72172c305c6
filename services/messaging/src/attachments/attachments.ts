import { randomUUID } from 'node:crypto';
import { mkdir, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { withTransaction } from '@crm/db';
import { sizeText } from '@crm/config';
import { AppError, forbidden, invalid, notFound, requireCan, traceFields, OrgContext } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import * as files from './attachments.repo';
import { claimedTypes, contentMismatch } from './content-type';
import { isUuid } from '@crm/validation';
import { viewerOf } from '../visibility';

const MIME = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/;
const MB = 1024 * 1024;

/** The name a user gave the file, made safe to echo back (never used as a path: bytes are stored by id). */
export function cleanFilename(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  const clean = base
    .replace(/[\u0000-\u001f\u007f"]/g, '')
    .trim()
    .slice(0, 255);
  return clean || 'file';
}

/** Bytes live under ATTACHMENTS_DIR/<org>/<id>: no user input ever reaches the path. */
export function fileOf(deps: Pick<Deps, 'config'>, orgId: string, id: string): string {
  // The org comes from a verified credential; checked anyway, since it becomes a folder name.
  if (!isUuid(orgId) || !isUuid(id)) throw new AppError('unauthenticated', 'No organization in the internal credential');
  return path.join(deps.config.ATTACHMENTS_DIR, orgId, id);
}

/** The answer to a file past ATTACHMENT_MAX_BYTES, naming the limit (a limit that is not whole MB is not rounded to one). */
export const tooLarge = (deps: Pick<Deps, 'config'>) =>
  new AppError('payload_too_large', `Attachments are limited to ${sizeText(deps.config.ATTACHMENT_MAX_BYTES)}`);

/** Each origin's quota in bytes: files from the network fill their own, never the one agents upload into. */
const quotaBytes = (deps: Deps, origin: files.AttachmentOrigin) =>
  (origin === 'inbound' ? deps.config.ATTACHMENTS_INBOUND_QUOTA_MB : deps.config.ATTACHMENTS_QUOTA_MB) * MB;

const quotaExceeded = (deps: Deps, origin: files.AttachmentOrigin) =>
  new AppError(
    'payload_too_large',
    origin === 'inbound'
      ? `Your organization's storage for files received from the chat network (${deps.config.ATTACHMENTS_INBOUND_QUOTA_MB} MB) is full; the file was not kept`
      : `Your organization's attachment storage (${deps.config.ATTACHMENTS_QUOTA_MB} MB) is full; sent files are kept, unsent uploads expire`,
    { code: 'storage_quota_exceeded' },
  );

/** What an upload in progress needs to know before its first byte: where to write and how much to keep. */
export interface UploadPlan {
  orgId: string;
  id: string;
  tempPath: string;
  origin: files.AttachmentOrigin;
  /** Bytes the file may have: the size limit or the space left in the org's quota, whichever is smaller. */
  keepBytes: number;
  quotaLeft: number;
}

/** Checked before the body is read, so a caller without the right or without space sends nothing for nothing. */
export async function planUpload(deps: Deps, ctx: OrgContext): Promise<UploadPlan> {
  // The connector stores the files that come from the network, for the org and with no user or role (its credential is
  // signed by the connector, so nobody else can pass a file off as inbound); users need the right.
  const origin: files.AttachmentOrigin = ctx.caller === 'connector' ? 'inbound' : 'upload';
  if (origin === 'upload') requireCan(ctx, 'conversations:write');
  const { orgId } = ctx;
  const quotaLeft = quotaBytes(deps, origin) - (await files.storedBytes(deps.pool, orgId, origin));
  const id = randomUUID();
  const tempPath = `${fileOf(deps, orgId, id)}.part`;
  await mkdir(path.dirname(tempPath), { recursive: true });
  return { orgId, id, tempPath, origin, keepBytes: Math.max(0, Math.min(deps.config.ATTACHMENT_MAX_BYTES, quotaLeft)), quotaLeft };
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
    if (file.size > plan.quotaLeft) throw quotaExceeded(deps, plan.origin);
    const filename = cleanFilename(file.filename);
    const contentType = MIME.test(file.declaredType) ? file.declaredType : 'application/octet-stream';
    const mismatch = contentMismatch(claimedTypes(contentType, filename), file.head, file.looksLikeText);
    if (mismatch)
      throw new AppError('invalid_argument', `file: ${mismatch}`, { code: 'content_type_mismatch', details: [{ field: 'file', message: mismatch }] });

    const target = fileOf(deps, plan.orgId, plan.id);
    const row = await withTransaction(deps.pool, async (tx) => {
      // Checked again under the org's lock: uploads finishing together must not overrun the quota between them.
      await files.lockOrgStorage(tx, plan.orgId);
      if ((await files.storedBytes(tx, plan.orgId, plan.origin)) + file.size > quotaBytes(deps, plan.origin)) throw quotaExceeded(deps, plan.origin);
      const inserted = await files.insert(tx, {
        id: plan.id,
        orgId: plan.orgId,
        filename,
        contentType,
        size: file.size,
        sha256: file.sha256,
        uploadedBy: isUuid(ctx.userId) ? ctx.userId : null,
        origin: plan.origin,
      });
      // Renamed before the commit: a row never points at a missing file; a failed commit removes it below.
      await rename(file.tempPath, target);
      return inserted;
    }).catch(async (err) => {
      await unlink(target).catch(() => undefined);
      throw err;
    });
    // Served as it is by the gateway (no mapper between): the Attachment shape, where a file with its bytes has null.
    return { ...files.toAttachment(row), expiredAt: null };
  } finally {
    await unlink(file.tempPath).catch(() => undefined);
  }
}

/** Drop what a refused or broken upload left on disk. */
export async function abandonUpload(plan: UploadPlan): Promise<void> {
  await unlink(plan.tempPath).catch(() => undefined);
}

/**
 * The answer for a file whose bytes ATTACHMENTS_RETENTION_DAYS deleted: the HTTP port answers it 410 Gone (the file
 * existed and will not come back, unlike a 404), and the message still lists the file with its `expiredAt`.
 */
export const ATTACHMENT_EXPIRED = 'attachment_expired';
const expired = (deps: Pick<Deps, 'config'>) =>
  new AppError('not_found', `This file was deleted after ${deps.config.ATTACHMENTS_RETENTION_DAYS} days (the organization's attachment retention)`, {
    code: ATTACHMENT_EXPIRED,
  });

/**
 * The row and on-disk location of one of the caller's org's attachments that the caller may see (inbox visibility:
 * an agent limited to their conversations gets 404 for a file sent in someone else's); 404 for anything else, and
 * attachment_expired for a file whose bytes retention deleted.
 */
export async function locate(deps: Deps, ctx: OrgContext, id: string) {
  const { orgId } = ctx;
  const row = isUuid(id) ? await files.findVisible(deps.pool, orgId, id, viewerOf(ctx)) : undefined;
  if (!row) throw notFound('Attachment');
  if (row.expired_at) throw expired(deps);
  const location = fileOf(deps, orgId, id);
  try {
    const { size } = await stat(location);
    return { row, location, size };
  } catch (err) {
    deps.log.error({ err, attachmentId: id, ...traceFields(ctx) }, 'attachment bytes missing from ATTACHMENTS_DIR');
    throw notFound('Attachment');
  }
}

/**
 * DeleteAttachment: an upload that no message carries and no scheduled message waits to send, by the user who
 * uploaded it (there is no role that manages other people's uploads: unsent ones are private drafts, and they expire
 * by themselves after ATTACHMENTS_ORPHAN_HOURS). Files of messages are the conversation's record: 409
 * attachment_in_use. 404 for an id the caller cannot see (another org's, or hidden by inbox visibility).
 */
export async function deleteUpload(deps: Deps, ctx: OrgContext, id: string) {
  requireCan(ctx, 'conversations:write');
  const { orgId } = ctx;
  if (!isUuid(id)) throw invalid('id', 'must be an attachment id');
  const row = await files.findVisible(deps.pool, orgId, id, viewerOf(ctx));
  if (!row) throw notFound('Attachment');
  if (row.message_id || (await files.heldBySchedule(deps.pool, orgId, id))) throw inUse();
  if (!row.uploaded_by || row.uploaded_by !== ctx.userId) throw forbidden('Only the user who uploaded a file can delete it');
  // Linked or scheduled since the look above: the send won, and the file stays.
  if (!(await files.deleteUnsent(deps.pool, orgId, id))) {
    if (await files.findById(deps.pool, orgId, id)) throw inUse();
    throw notFound('Attachment');
  }
  await unlink(fileOf(deps, orgId, id)).catch((err: NodeJS.ErrnoException) => {
    // The row is gone, so nothing serves these bytes any more; leftover bytes are harmless.
    if (err.code !== 'ENOENT') deps.log.warn({ err, attachmentId: id, ...traceFields(ctx) }, 'could not delete the file of a deleted attachment');
  });
  return { ok: true, message: 'Attachment deleted' };
}

const inUse = () =>
  new AppError('already_exists', 'This file was sent with a message (or a scheduled message waits to send it); only unsent uploads can be deleted', {
    code: 'attachment_in_use',
  });
