import { withTransaction, type Pool } from '@crm/db';
import { enqueueEvent } from '@crm/events';
import type { Logger } from '@crm/logger';
import { EVENTS } from '../conversations';

const JOB = 'conversation_owners_snapshot_v1';
const CHUNK = 500;

interface OwnerRow {
  id: string;
  org_id: string;
  contact_id: string | null;
  chatnet_account_id: string;
  assignee_id: string | null;
}

/**
 * crm applies inbox visibility to contacts through its own projection of who owns each conversation, fed by
 * conversation.created / conversation.assigned. Conversations stored before crm consumed those events would be
 * missing from it, so once per database this publishes every conversation's owner as internal
 * `conversation.owners_snapshot` events (per org, in chunks of 500). crm only fills gaps with them (a row it
 * already has came from a later event), so a snapshot racing a new assignment cannot undo it. Runs in one
 * transaction with the job's marker row: several instances starting together run it once.
 */
export async function publishOwnersSnapshotOnce(pool: Pool, log: Logger): Promise<void> {
  const published = await withTransaction(pool, async (tx) => {
    const claimed = await tx.query('INSERT INTO backfills (name) VALUES ($1) ON CONFLICT DO NOTHING RETURNING name', [JOB]);
    if (claimed.rowCount === 0) return -1;
    let events = 0;
    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const { rows } = await tx.query<OwnerRow>(
        'SELECT id, org_id, contact_id, chatnet_account_id, assignee_id FROM conversations WHERE id > $1 ORDER BY id LIMIT $2',
        [after, CHUNK * 4],
      );
      if (rows.length === 0) break;
      after = rows[rows.length - 1].id;
      const byOrg = new Map<string, OwnerRow[]>();
      for (const r of rows) {
        const list = byOrg.get(r.org_id);
        if (list) list.push(r);
        else byOrg.set(r.org_id, [r]);
      }
      for (const [orgId, list] of byOrg) {
        for (let i = 0; i < list.length; i += CHUNK) {
          const conversations = list.slice(i, i + CHUNK).map((r) => ({
            conversationId: r.id,
            contactId: r.contact_id,
            chatnetAccountId: r.chatnet_account_id,
            assigneeId: r.assignee_id,
          }));
          // Start-up work: a trace of its own.
          await enqueueEvent(tx, { type: EVENTS.conversationOwnersSnapshot, orgId, data: { conversations }, traceparent: undefined });
          events++;
        }
      }
    }
    return events;
  });
  if (published >= 0) log.info({ events: published }, 'published the conversation owners snapshot for crm (once per database)');
}
