import type { z } from 'zod';
import type { webhooks } from '@crm/proto-types';
import type { FeedEvent as FeedEventOut, FeedPage } from './events.schemas';

type EventPage = webhooks.EventPage__Output;
type FeedEvent = webhooks.FeedEvent__Output;

/** One feed event: `data` is the webhook body's, sent by the service as JSON text and given back as JSON. */
export function feedEventOut(e: FeedEvent): z.input<typeof FeedEventOut> {
  return { id: e.id, type: e.type, occurredAt: e.occurredAt, data: JSON.parse(e.data) as Record<string, unknown> };
}

export function feedPageOut(p: EventPage): z.input<typeof FeedPage> {
  return { events: p.events.map(feedEventOut), nextCursor: p.nextCursor };
}
