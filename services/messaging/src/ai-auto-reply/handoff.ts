import { withTransaction } from '@crm/db';
import { enqueueEvent } from '@crm/events';
import type { Deps } from '../deps';
import { assignByRotation, listedAssignmentUsers } from '../assignment';
import { convs, EVENTS } from '../conversations';
import { insertAssistantNote } from '../notes';
import { finish } from './replies.repo';

/** Why the assistant gave a conversation to a person: ai's reasons, and messaging's own. */
export type HandoffReason =
  'low_confidence' | 'asked_for_person' | 'quota_exhausted' | 'max_replies' | 'ai_unavailable' | 'send_failed' | (string & {});

/**
 * Hand the conversation to a person (issue #32 item 5), in one transaction: an unassigned conversation goes to the
 * next person of its account's rotation (assignment's round robin over the account's listed users, whatever its mode;
 * nobody eligible leaves it unassigned, for the team to pick up), one already assigned stays with its assignee. Either
 * way `conversation.assigned` says so with `reason: "ai_handoff"` (assignedBy null: the system), a private note says
 * why, and the row is done: the assistant stays quiet in the conversation until a person has replied.
 */
export async function handOff(
  deps: Deps,
  row: { id: string; org_id: string; conversation_id: string; message_id: string },
  reason: HandoffReason,
  why: string,
) {
  const orgId = row.org_id;
  const ctx = { orgId, requestId: `ai-auto-reply:${row.id}` };
  // Identity's answers about the rotation's users into the cache first, so the conversation's row lock below is not
  // held across remote calls (as assignRoundRobin does).
  const before = await convs.findById(deps.pool, orgId, row.conversation_id);
  if (before && !before.assignee_id) {
    const users = await listedAssignmentUsers(deps.pool, orgId, before.chatnet_account_id);
    await Promise.all(users.map((id) => deps.remote.userActive(ctx, id)));
  }
  await withTransaction(deps.pool, async (db) => {
    const conv = await convs.findById(db, orgId, row.conversation_id, true);
    if (!conv) return finish(db, row, 'skipped', 'not_found');
    let assigneeId = conv.assignee_id;
    if (!assigneeId) {
      assigneeId = await assignByRotation(deps, db, ctx, conv, {
        requireMode: false,
        identityDown: 'skip',
        reason: 'ai_handoff',
      });
    }
    if (!assigneeId || assigneeId === conv.assignee_id) {
      // Nobody new: still announced, so whoever watches the inbox (notifications, webhooks) hears of the hand-off.
      await enqueueEvent(db, {
        type: EVENTS.conversationAssigned,
        orgId,
        data: {
          conversationId: conv.id,
          contactId: conv.contact_id,
          chatnetAccountId: conv.chatnet_account_id,
          assigneeId: conv.assignee_id,
          teamId: conv.team_id,
          previousAssigneeId: conv.assignee_id,
          assignedBy: null,
          reason: 'ai_handoff',
        },
        // A timer's work (the auto-reply worker's claim loop): a trace of its own.
        traceparent: undefined,
      });
    }
    const who = assigneeId ? '' : ' Nobody in the account’s rotation was free: it waits unassigned.';
    await insertAssistantNote(db, orgId, conv.id, `AI assistant handed this conversation to a person: ${why}.${who}`);
    await finish(db, row, 'handed_off', reason);
  });
  deps.log.info({ orgId, conversationId: row.conversation_id, reason }, 'AI auto-reply handed the conversation to a person');
}
