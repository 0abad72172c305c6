import { unlink } from 'node:fs/promises';
import { directDatabaseUrl } from '@crm/config';
import { ClaimLoop } from '@crm/db';
import type { Deps } from '../deps';
import * as files from './attachments.repo';
import { fileOf } from './attachments';

/** Rows per statement: one sweep deletes in batches of this many, and comes round again at once after a full one. */
const BATCH = 500;

type SweepDeps = Pick<Deps, 'config' | 'pool' | 'log'>;

/** Remove the bytes of rows that went; a crash before this leaves bytes without a row (harmless), never the reverse. */
async function removeBytes(deps: SweepDeps, gone: { id: string; org_id: string }[], what: string): Promise<void> {
  await Promise.all(
    gone.map((r) =>
      unlink(fileOf(deps, r.org_id, r.id)).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') deps.log.warn({ err, attachmentId: r.id }, `could not delete the file of ${what}`);
      }),
    ),
  );
}

/**
 * One batch of orphans: uploads that no message took within ATTACHMENTS_ORPHAN_HOURS (also files whose message was
 * deleted), rows first, then their files. Returns how many were deleted.
 */
async function deleteOrphanBatch(deps: SweepDeps): Promise<number> {
  const gone = await files.deleteOrphans(deps.pool, deps.config.ATTACHMENTS_ORPHAN_HOURS, BATCH);
  await removeBytes(deps, gone, 'an orphan attachment');
  if (gone.length) deps.log.info({ deleted: gone.length }, 'deleted attachments never sent with a message');
  return gone.length;
}

/** Every orphan due now, batch after batch (tests run it as another instance would). Returns how many were deleted. */
export async function sweepOrphanAttachments(deps: SweepDeps): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await deleteOrphanBatch(deps);
    total += deleted;
    if (deleted < BATCH) return total;
  }
}

/**
 * One batch of retention: files (sent, received or unsent) older than ATTACHMENTS_RETENTION_DAYS are marked expired and
 * their bytes deleted; the rows stay so their messages list them as expired. Returns how many expired.
 */
export async function expireOldAttachments(deps: SweepDeps): Promise<number> {
  const gone = await files.expireOld(deps.pool, deps.config.ATTACHMENTS_RETENTION_DAYS, BATCH);
  await removeBytes(deps, gone, 'an expired attachment');
  if (gone.length)
    deps.log.info({ expired: gone.length }, `deleted the bytes of attachments older than ${deps.config.ATTACHMENTS_RETENTION_DAYS} days`);
  return gone.length;
}

/**
 * Both sweeps on the timer facility (ARCHITECTURE.md, Timers): each instance sleeps until the next file falls due
 * (`nextDueInMs`: the oldest waiting upload's orphan time or the oldest file's retention time), woken early by a NOTIFY
 * on messaging_attachments_due (a first unsent upload stored, a scheduled message that held uploads ended). One claim
 * runs one batch of each sweep (SKIP LOCKED: instances share the work) and comes round at once after a full batch.
 */
export async function startAttachmentSweeper(deps: SweepDeps): Promise<{ stop(): Promise<void> }> {
  const loop = new ClaimLoop<never>({
    name: 'attachment sweeps',
    databaseUrl: directDatabaseUrl(deps.config),
    channel: files.ATTACHMENTS_DUE_CHANNEL,
    concurrency: 1,
    claim: async () => {
      const orphans = await deleteOrphanBatch(deps);
      const expired = await expireOldAttachments(deps);
      return { items: [], again: orphans === BATCH || expired === BATCH, left: false };
    },
    nextDueInMs: () => files.nextSweepDueInMs(deps.pool, deps.config.ATTACHMENTS_ORPHAN_HOURS, deps.config.ATTACHMENTS_RETENTION_DAYS),
    work: async () => undefined,
    log: deps.log,
  });
  await loop.start();
  return { stop: () => loop.stop() };
}
