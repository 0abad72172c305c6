import { type Request, type Response, Router } from 'express';
import { z } from 'zod';
import { decodeRemoteError } from '@crm/grpc-kit';
import type { RouteDeps, ServiceRoutes } from './deps';
import { feedPageOut } from './events.out';
import { badRequest, HttpError } from '../http/errors';
import { requirePermission } from '../http/permission';
import { requireScope } from '../http/scopes';
import { ctxOf } from '../http/principal';
import { query } from '../http/validate';

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

/**
 * The event feed (issue #31), for integrators (API key) and, internally, owners and admins: the organization's public
 * events after a cursor, oldest first, as their webhooks carry them. A long poll holds the call for up to `wait`
 * seconds, so its gRPC deadline is the usual one plus the wait.
 */
export function eventsRoutes({ clients, config }: RouteDeps): ServiceRoutes {
  const read = async (req: Request, res: Response) => {
    const q = query(req, EventFeedQuery);
    const limit = Math.min(FEED_MAX_LIMIT, Math.max(1, Number(q.limit ?? FEED_DEFAULT_LIMIT)));
    const waitSeconds = Math.min(FEED_MAX_WAIT_SECONDS, Number(q.wait ?? 0));
    const types = (q.types ?? '')
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t !== '');
    if (types.length > 100) throw badRequest([{ field: 'types', message: 'must name at most 100 event types' }]);
    try {
      const page = await clients.webhooks.ReadEvents({ after: q.after ?? '', types, limit, waitSeconds }, ctxOf(req, res), {
        deadlineMs: config.GRPC_DEADLINE_MS + waitSeconds * 1000,
      });
      res.json(feedPageOut(page));
    } catch (err) {
      // 410: the events after this cursor are no longer kept; the service says so as a failed precondition.
      const remote = decodeRemoteError(err as object);
      if (remote.code === 'cursor_expired') throw new HttpError(410, 'cursor_expired', remote.message);
      throw err;
    }
  };
  const pub = Router();
  pub.get('/events', requireScope('events:read'), read);
  const internal = Router();
  // The events carry every conversation's data: owners and admins, as the webhook settings.
  internal.get('/events', requirePermission('settings:edit'), read);
  return { public: pub, internal };
}
