import type { HandlersFor } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import * as deliveries from '../domain/deliveries';
import * as feed from '../domain/feed';
import * as replays from '../domain/replays';
import * as webhooks from '../domain/webhooks';

/** webhooks.v1.WebhooksService: decode, call the domain, return; errors are mapped by grpc-kit. */
export function webhooksHandlers(deps: Deps): HandlersFor<'webhooks.v1.WebhooksService'> {
  return {
    ListWebhooks: (_req, ctx) => webhooks.list(deps, ctx),
    GetWebhook: (req, ctx) => webhooks.get(deps, ctx, req.id),
    CreateWebhook: (req, ctx) => webhooks.create(deps, ctx, req),
    UpdateWebhook: (req, ctx) => webhooks.update(deps, ctx, req),
    DeleteWebhook: (req, ctx) => webhooks.remove(deps, ctx, req.id),
    TestWebhook: (req, ctx) => webhooks.test(deps, ctx, req.id),
    ListDeliveries: (req, ctx) => deliveries.list(deps, ctx, req),
    Redeliver: (req, ctx) => deliveries.redeliver(deps, ctx, req.id),
    ListEventTypes: (_req, ctx) => webhooks.eventTypes(ctx),
    ReadEvents: (req, ctx) => feed.read(deps, ctx, req),
    ReplayWebhook: (req, ctx) => replays.start(deps, ctx, req),
    GetReplay: (req, ctx) => replays.get(deps, ctx, req),
  };
}
