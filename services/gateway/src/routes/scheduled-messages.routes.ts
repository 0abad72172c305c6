import { Router } from 'express';
import { z } from 'zod';
import { messagingRules as rules } from '@crm/validation';
import type { RouteDeps, ServiceRoutes } from './deps';
import { ctxOf } from '../http/principal';
import { body, pageParams, parseDateOrTime, query, s } from '../http/validate';
import { scheduledMessageOut } from './scheduled-messages.out';

/** An ISO 8601 timestamp, sent on as its UTC instant; whether it lies ahead (and at most 90 days) is messaging's call. */
export const sendAt = () => s.timestamp().transform((v) => parseDateOrTime(v)!.at.toISOString());

export const ScheduledQuery = z.object({
  conversationId: z.string().trim().uuid('must be an id').optional(),
  status: s.optionalQueryEnum(rules.SCHEDULED_MESSAGE_STATUSES),
});

export const ScheduledPatch = z
  .object({
    content: z.string({ error: 'must be a string' }).max(rules.CONTENT_MAX, `must be at most ${rules.CONTENT_MAX} characters`).optional(),
    sendAt: sendAt().optional(),
  })
  .refine((b) => b.content !== undefined || b.sendAt !== undefined, { path: ['content'], message: rules.SCHEDULED_CHANGE_REQUIRED });

/**
 * Scheduled messages (owned by messaging): made by POST /conversations/:id/messages with `sendAt` (chat.routes.ts),
 * listed, read, changed and cancelled here until messaging's timer sends them.
 */
export function scheduledMessagesRoutes({ clients }: RouteDeps): ServiceRoutes {
  const internal = Router();
  const messaging = () => clients.messaging;

  internal.get('/scheduled-messages', async (req, res) => {
    const q = query(req, ScheduledQuery);
    const out = await messaging().ListScheduledMessages({ ...q, ...pageParams(req, 20, 100) }, ctxOf(req, res));
    res.json({ data: out.data.map(scheduledMessageOut), pagination: out.pagination });
  });
  internal.get('/scheduled-messages/:id', async (req, res) => {
    res.json(scheduledMessageOut(await messaging().GetScheduledMessage({ id: req.params.id }, ctxOf(req, res))));
  });
  internal.put('/scheduled-messages/:id', async (req, res) => {
    const b = body(req, ScheduledPatch);
    res.json(scheduledMessageOut(await messaging().UpdateScheduledMessage({ id: req.params.id, ...b }, ctxOf(req, res))));
  });
  internal.delete('/scheduled-messages/:id', async (req, res) => {
    await messaging().CancelScheduledMessage({ id: req.params.id }, ctxOf(req, res));
    res.status(204).end();
  });

  return { internal };
}
