import { z } from 'zod';
import { EventFeedQuery, FEED_MAX_WAIT_SECONDS } from '../../routes/events.routes';
import type { feedPageOut } from '../../routes/events.out';
import { area } from '../registry';
import { keysMatch } from '../schemas/check';

/** One event of the feed: the `id`, `type` and `data` its webhook deliveries carry (`data` per the webhooks section). */
const FeedEvent = z.object({
  id: z.string().meta({ description: 'the event id, sent as `webhook-id` by its deliveries' }),
  type: z.string().meta({ description: 'a public event name (the webhooks section lists them)' }),
  occurredAt: z.string().meta({ description: 'ISO 8601; the webhook body’s `timestamp`' }),
  data: z.record(z.string(), z.unknown()).meta({ description: 'exactly the webhook body’s `data` for this event type' }),
});
const FeedPage = z.object({
  events: z.array(FeedEvent).meta({ description: 'oldest first' }),
  nextCursor: z.string().meta({
    description: 'always present: pass it as `after` for the next page; an empty page returns a cursor to poll with',
  }),
});
keysMatch<z.infer<typeof FeedPage>, ReturnType<typeof feedPageOut>>(true);

const FEED_DOC =
  'The organization’s public events (the webhook catalogue), oldest first, each with the `id`, `type` and `data` its ' +
  'webhook delivery carries, kept for EVENT_FEED_RETENTION_DAYS (7 by default). Without `after` the feed starts at the ' +
  'oldest kept event; pass each page’s `nextCursor` as `after` for the next. An empty page still returns a cursor, so a ' +
  `client can poll; with \`wait\` (at most ${FEED_MAX_WAIT_SECONDS} s) an empty page is held until an event arrives. ` +
  '400 names `after` (not a cursor of this feed), `types` (an unknown or internal event name), `limit` or `wait`; ' +
  '410 `cursor_expired`: the cursor is older than the retention, so events after it may be gone: start again without `after`.';

const pub = area({ prefix: '/api/public', auth: 'apiKey', tag: 'Public: events' });
pub.op('GET /events', {
  summary: 'The event feed: public events after a cursor, oldest first, with long-polling',
  description:
    FEED_DOC +
    ' Needs the API key scope `events:read`. The events carry every conversation of the organization, so a key bound to a user ' +
    'reads the feed only when that user may edit settings (owners and admins): an agent-bound key gets 403.',
  scope: 'events:read',
  query: EventFeedQuery,
  responses: { 200: FeedPage },
  errors: [410],
});

const internal = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Webhooks' });
internal.op('GET /events', {
  summary: 'The event feed (owners and admins): the public API’s feed, read with a bearer token',
  description: FEED_DOC,
  query: EventFeedQuery,
  responses: { 200: FeedPage },
  errors: [410],
});

export const eventFeedOps = [...internal.ops, ...pub.ops];
