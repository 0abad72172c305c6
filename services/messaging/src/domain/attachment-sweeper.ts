import { unlink } from 'node:fs/promises';
import type { Deps } from '../deps';
import * as files from '../db/attachments.repo';
import { fileOf } from './attachments';

const BATCH = 500;

/**
 * Delete uploads that no message took within ATTACHMENTS_ORPHAN_HOURS (also files whose message was deleted):
 * rows first, in batches, then their files. A crash between the two leaves a file without a row (harmless
 * bytes), never a row without its file. Returns how many were deleted.
 */
export async function sweepOrphanAttachments(deps: Pick<Deps, 'config' | 'pool' | 'log'>): Promise<number> {
  let total = 0;
  for (;;) {
    const gone = await files.deleteOrphans(deps.pool, deps.config.ATTACHMENTS_ORPHAN_HOURS, BATCH);
    await Promise.all(
      gone.map((r) =>
        unlink(fileOf(deps, r.org_id, r.id)).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'ENOENT') deps.log.warn({ err, attachmentId: r.id }, 'could not delete an orphan attachment file');
        }),
      ),
    );
    total += gone.length;
    if (gone.length < BATCH) break;
  }
  if (total) deps.log.info({ deleted: total }, 'deleted attachments never sent with a message');
  return total;
}

/** Run the sweep every ATTACHMENTS_SWEEP_INTERVAL_MS, one at a time; stop() waits for a sweep in progress. */
export function startAttachmentSweeper(deps: Pick<Deps, 'config' | 'pool' | 'log'>): { stop(): Promise<void> } {
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = sweepOrphanAttachments(deps)
      .catch((err) => deps.log.warn({ err }, 'sweeping orphan attachments failed'))
      .finally(() => (running = undefined));
  }, deps.config.ATTACHMENTS_SWEEP_INTERVAL_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
