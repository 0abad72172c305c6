import { z } from 'zod';

export const FEED_DEFAULT_LIMIT = 100;
export const FEED_MAX_LIMIT = 500;
export const FEED_MAX_WAIT_SECONDS = 30;

const wholeNumber = (what: string) => z.string().regex(/^\d+$/, `must be a whole number${what}`).optional();

/** The feed's query (the shapes; the webhooks service owns the rules: event names, the cursor, its expiry). */
export const EventFeedQuery = z.object({
  after: z.string().max(200, 'is not a valid cursor; pass nextCursor exactly as a page returned it').optional(),
  types: z
    .string()
    .max(2_000, 'must be at most 2000 characters')
    .optional()
    .meta({ description: 'comma-separated public event names (the webhook catalogue); absent: every type' }),
  limit: wholeNumber('').meta({ description: `events per page, 1-${FEED_MAX_LIMIT} (larger values are clamped); default ${FEED_DEFAULT_LIMIT}` }),
  wait: wholeNumber(' of seconds').meta({
    description: `hold an empty page up to this many seconds (at most ${FEED_MAX_WAIT_SECONDS}; larger values are clamped) until an event arrives`,
  }),
});

/** One event of the feed (feedEventOut): the `id`, `type` and `data` its webhook deliveries carry (`data` per the webhooks section). */
export const FeedEvent = z.object({
  id: z.string().meta({ description: 'the event id, sent as `webhook-id` by its deliveries' }),
  type: z.string().meta({ description: 'a public event name (the webhooks section lists them)' }),
  occurredAt: z.string().meta({ description: 'ISO 8601; the webhook body’s `timestamp`' }),
  data: z.record(z.string(), z.unknown()).meta({ description: 'exactly the webhook body’s `data` for this event type' }),
});
/** A page of the feed (feedPageOut). */
export const FeedPage = z.object({
  events: z.array(FeedEvent).meta({ description: 'oldest first' }),
  nextCursor: z.string().meta({
    description: 'always present: pass it as `after` for the next page; an empty page returns a cursor to poll with',
  }),
});
