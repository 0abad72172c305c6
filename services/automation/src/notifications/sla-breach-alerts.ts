import type { PoolClient } from '@crm/db';
import { eventTraceparent, type ParsedEvent } from '@crm/events';
import { isUuid } from '@crm/validation';
import * as notifications from './notifications';

const WINDOW_NAMES = { first_response: 'first response', next_response: 'next response', resolution: 'resolution' } as const;

/**
 * messaging's `conversation.sla_breached` → `sla_breached` notifications as the policy's onBreach.notify says (the
 * event carries it): `assignee` one for the assignee at the breach (none assigned: nobody), `team_leads` one for the
 * org's team leads and above (an audience, so each reads it on their own). Ids derive from the event, so a
 * redelivered event notifies once; `resourceId` is the conversation.
 */
export async function slaBreachAlerts(event: ParsedEvent<'conversation.sla_breached'>, db: PoolClient): Promise<number> {
  const d = event.data;
  const window = WINDOW_NAMES[d.target];
  const title = `SLA breached: ${window}`;
  const message = `A conversation missed its ${window} due time (${d.dueAt.slice(0, 16).replace('T', ' ')} UTC).`;
  const base = { orgId: event.orgId, type: 'sla_breached', title, resourceId: d.conversationId.toLowerCase(), traceparent: eventTraceparent(event) };
  let created = 0;
  if (d.notify.includes('assignee') && d.assigneeId && isUuid(d.assigneeId)) {
    const userId = d.assigneeId.toLowerCase();
    if (await notifications.create(db, notifications.derivedId('sla_breached', event.id, userId), { ...base, userId, message })) created++;
  }
  if (d.notify.includes('team_leads')) {
    const audience = { ...base, audienceRole: 'team_lead' as const, message: d.assigneeId ? message : `${message} It has no assignee.` };
    if (await notifications.create(db, notifications.derivedId('sla_breached', event.id, 'team_leads'), audience)) created++;
  }
  return created;
}
