import { Router } from 'express';
import { z } from 'zod';
import { webhookRules as rules } from '@crm/validation';
import type { RouteDeps, ServiceRoutes } from './deps';
import { deliveryOut, replayOut, testResultOut, webhookBriefOut, webhookCreatedOut, webhookOut } from './webhooks.out';
import { requirePermission } from '../http/permission';
import { ctxOf } from '../http/principal';
import { body, pageParams, parseDateOrTime, query, s } from '../http/validate';

// Shapes and the URL scheme only; the webhooks service owns the rules (event names, URL address policy, secret format).
const url = z
  .string({ error: 'is required' })
  .trim()
  .min(1, 'is required')
  .pipe(s.httpUrl({ max: rules.MAX_URL_LENGTH }));
const events = z
  .array(z.string({ error: 'must be an array of event names' }), { error: 'must be an array of event names' })
  .max(rules.MAX_EVENTS, rules.TOO_MANY_EVENTS);
// 128 characters may take 256 UTF-16 units (emoji); the service counts characters. An unpaired surrogate
// cannot cross gRPC as itself (it would arrive as U+FFFD, a different key), so it stops here.
const secret = z
  .string({ error: 'must be a string' })
  .max(256, 'must be at most 128 characters')
  .refine((v) => !/\p{Cs}/u.test(v), 'must not contain control characters or line breaks');

export const NewWebhook = z.object({
  url,
  events: events.min(1, rules.NO_EVENTS),
  secret: secret.optional(),
});
export const WebhookPatch = z.object({
  url: url.optional(),
  events: events.min(1, rules.NO_EVENTS).optional(),
  secret: secret.min(1, 'must not be empty').optional(),
  active: z.boolean({ error: 'must be true or false' }).optional(),
});
/** A replay's window (event occurredAt, from inclusive, to exclusive) and types; the service checks the retention. */
export const ReplayWindow = z.object({
  from: s.timestamp(),
  to: s.timestamp(),
  types: z
    .array(z.string({ error: 'must be an array of event names' }), { error: 'must be an array of event names' })
    .max(rules.MAX_EVENTS, rules.TOO_MANY_EVENTS)
    .optional(),
});
const isoOf = (v: string) => parseDateOrTime(v)!.at.toISOString();

export const DeliveryQuery = z.object({
  status: s.optionalQueryEnum(rules.DELIVERY_STATUSES),
  eventType: z.string().max(100).optional(),
});

/** Webhook settings (ARCHITECTURE.md "Webhooks"): endpoints, test sends, the attempt log, redelivery; `settings:edit` for all. */
export function webhooksRoutes({ clients }: RouteDeps): ServiceRoutes {
  const r = Router();
  // Everything here is owner/admin only, reads included: the delivery log holds event payloads with customer data.
  r.use('/webhook-settings', requirePermission('settings:edit'));

  r.get('/webhook-settings', async (req, res) => {
    const { data } = await clients.webhooks.ListWebhooks({}, ctxOf(req, res));
    res.json(data.map(webhookBriefOut));
  });
  r.get('/webhook-settings/event-types', async (req, res) => {
    res.json(await clients.webhooks.ListEventTypes({}, ctxOf(req, res)));
  });
  r.post('/webhook-settings', async (req, res) => {
    const b = body(req, NewWebhook);
    const w = await clients.webhooks.CreateWebhook({ url: b.url, events: b.events, secret: b.secret ?? '' }, ctxOf(req, res));
    res.status(201).json(webhookCreatedOut(w));
  });
  r.post('/webhook-settings/deliveries/:deliveryId/redeliver', async (req, res) => {
    res.status(202).json(deliveryOut(await clients.webhooks.Redeliver({ id: req.params.deliveryId }, ctxOf(req, res))));
  });
  r.get('/webhook-settings/:id', async (req, res) => {
    res.json(webhookOut(await clients.webhooks.GetWebhook({ id: req.params.id }, ctxOf(req, res))));
  });
  r.put('/webhook-settings/:id', async (req, res) => {
    const p = body(req, WebhookPatch);
    const w = await clients.webhooks.UpdateWebhook(
      { id: req.params.id, url: p.url, secret: p.secret, active: p.active, events: p.events ?? [], setEvents: p.events !== undefined },
      ctxOf(req, res),
    );
    res.json(webhookOut(w));
  });
  r.delete('/webhook-settings/:id', async (req, res) => {
    await clients.webhooks.DeleteWebhook({ id: req.params.id }, ctxOf(req, res));
    res.status(204).end();
  });
  r.post('/webhook-settings/:id/test', async (req, res) => {
    res.json(testResultOut(await clients.webhooks.TestWebhook({ id: req.params.id }, ctxOf(req, res))));
  });
  r.post('/webhook-settings/:id/replay', async (req, res) => {
    const b = body(req, ReplayWindow);
    const started = await clients.webhooks.ReplayWebhook(
      { webhookId: req.params.id, from: isoOf(b.from), to: isoOf(b.to), types: b.types ?? [] },
      ctxOf(req, res),
    );
    res.status(202).json({ replayId: started.replayId, count: started.count });
  });
  r.get('/webhook-settings/:id/replays/:replayId', async (req, res) => {
    res.json(replayOut(await clients.webhooks.GetReplay({ webhookId: req.params.id, replayId: req.params.replayId }, ctxOf(req, res))));
  });
  r.get('/webhook-settings/:id/deliveries', async (req, res) => {
    const out = await clients.webhooks.ListDeliveries(
      { webhookId: req.params.id, ...pageParams(req, 50), ...query(req, DeliveryQuery) },
      ctxOf(req, res),
    );
    res.json({ data: out.data.map(deliveryOut), pagination: out.pagination });
  });

  return { internal: r };
}
