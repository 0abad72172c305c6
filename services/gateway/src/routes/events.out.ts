import type { webhooks } from '@crm/proto-types';

type EventPage = webhooks.EventPage__Output;
type FeedEvent = webhooks.FeedEvent__Output;

/** One feed event: `data` is the webhook body's, sent by the service as JSON text and given back as JSON. */
export function feedEventOut(e: FeedEvent) {
  return { id: e.id, type: e.type, occurredAt: e.occurredAt, data: JSON.parse(e.data) as unknown };
}

export function feedPageOut(p: EventPage) {
  return { events: p.events.map(feedEventOut), nextCursor: p.nextCursor };
}
