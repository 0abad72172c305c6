import { decodeRemoteError } from '@crm/grpc-kit';
import type { RouteDeps, ServiceRoutes } from './deps';
import { feedPageOut } from './events.out';
import { EventFeedQuery, FEED_DEFAULT_LIMIT, FEED_MAX_LIMIT, FEED_MAX_WAIT_SECONDS, FeedPage } from './events.schemas';
import { badRequest, HttpError } from '../http/errors';
import { responseContract } from '../http/response-contract';
import { routeArea, type RouteInput } from '../http/route-area';

const FEED_DOC =
  'The organization’s public events (the webhook catalogue), oldest first, each with the `id`, `type` and `data` its ' +
  'webhook delivery carries, kept for EVENT_FEED_RETENTION_DAYS (7 by default). Without `after` the feed starts at the ' +
  'oldest kept event; pass each page’s `nextCursor` as `after` for the next. An empty page still returns a cursor, so a ' +
  `client can poll; with \`wait\` (at most ${FEED_MAX_WAIT_SECONDS} s) an empty page is held until an event arrives. ` +
  '400 names `after` (not a cursor of this feed), `types` (an unknown or internal event name), `limit` or `wait`; ' +
  '410 `cursor_expired`: the cursor is older than the retention, so events after it may be gone: start again without `after`.';

/**
 * The event feed (issue #31), for integrators (API key) and, internally, owners and admins: the organization's public
 * events after a cursor, oldest first, as their webhooks carry them. A long poll holds the call for up to `wait`
 * seconds, so its gRPC deadline is the usual one plus the wait. Served and documented from these declarations.
 */
async function read({ query: q, ctx, deps }: RouteInput<typeof EventFeedQuery._output, undefined>) {
  const limit = Math.min(FEED_MAX_LIMIT, Math.max(1, Number(q.limit ?? FEED_DEFAULT_LIMIT)));
  const waitSeconds = Math.min(FEED_MAX_WAIT_SECONDS, Number(q.wait ?? 0));
  const types = (q.types ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  if (types.length > 100) throw badRequest([{ field: 'types', message: 'must name at most 100 event types' }]);
  try {
    const page = await deps.clients.webhooks.ReadEvents({ after: q.after ?? '', types, limit, waitSeconds }, ctx, {
      deadlineMs: deps.config.GRPC_DEADLINE_MS + waitSeconds * 1000,
    });
    return feedPageOut(page);
  } catch (err) {
    // 410: the events after this cursor are no longer kept; the service says so as a failed precondition.
    const remote = decodeRemoteError(err as object);
    if (remote.code === 'cursor_expired') throw new HttpError(410, 'cursor_expired', remote.message);
    throw err;
  }
}

const internal = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Webhooks' });
internal.route('GET /events', {
  summary: 'The event feed (owners and admins): the public API’s feed, read with a bearer token',
  description: FEED_DOC,
  // The events carry every conversation's data: owners and admins, as the webhook settings.
  permission: 'settings:edit',
  query: EventFeedQuery,
  response: FeedPage,
  errors: [410],
  handler: read,
});

const pub = routeArea({ prefix: '/api/public', auth: 'apiKey', tag: 'Public: events' });
pub.route('GET /events', {
  summary: 'The event feed: public events after a cursor, oldest first, with long-polling',
  description:
    FEED_DOC +
    ' Needs the API key scope `events:read`. The events carry every conversation of the organization, so a key bound to a user ' +
    'reads the feed only when that user may edit settings (owners and admins): an agent-bound key gets 403.',
  scope: 'events:read',
  query: EventFeedQuery,
  response: FeedPage,
  errors: [410],
  handler: read,
});

/** The feed's operations, in the document's order. */
export const eventFeedOps = [...internal.ops, ...pub.ops];

export function eventsRoutes(deps: RouteDeps): ServiceRoutes {
  const contract = responseContract(deps.config);
  return { public: pub.router(deps, contract), internal: internal.router(deps, contract) };
}
