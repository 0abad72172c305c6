import type { PoolClient } from '@crm/db';
import { isEventOf, type EventEnvelope } from '@crm/events';
import { autoReplySettings } from '../auto-reply-settings';

/** What the settings copy follows: ai's announcements only (a rare event, on a queue of its own). */
export const AUTO_REPLY_SETTINGS_BINDINGS = ['ai.auto_reply_changed'];

/** ai's auto-reply settings into messaging's copy (the newest wins); its trigger tells every instance to reload. */
export async function applyAutoReplySettings(db: PoolClient, events: EventEnvelope[]): Promise<void> {
  for (const e of events) {
    if (!isEventOf(e, 'ai.auto_reply_changed')) continue;
    const d = e.data;
    await autoReplySettings.upsert(db, {
      orgId: e.orgId,
      enabled: d.enabled,
      accountIds: d.chatnetAccountIds.map((a) => a.toLowerCase()),
      onlyOutsideHours: d.onlyOutsideBusinessHours,
      maxReplies: d.maxRepliesPerConversation,
      updatedAt: d.updatedAt,
    });
  }
}
