import type { PoolClient } from '@crm/db';
import { eventTraceFields, eventTraceparent, isEventOf, type BatchHandler, type EventEnvelope } from '@crm/events';
import { escapeHtml } from '@crm/mail';
import type { Deps } from '../deps';
import * as sent from './email-alerts.repo';
import type { AlertRecipient, AlertRecipients } from './alert-recipients';
import { isUuid } from '@crm/validation';
import { PREVIEW_CHARS } from './inbound-alerts';

/** Only this consumer's own notifications reach it: alert emails follow `new_message` notifications. */
export const EMAIL_ALERT_BINDINGS = ['notification.created'];

export function emailAlertsQueue(exchange: string): string {
  return `${exchange}.automation.email-alerts`;
}

/**
 * A new `new_message` notification (the `notification.created` automation itself published) → a short email to its user
 * when they opted in (identity's `notifyByEmail`) and are active, at most once per conversation per EMAIL_ALERT_WINDOW_MS (15 minutes).
 * Separate from the notification's own transaction by design: a slow or refusing mail server can delay or lose an
 * email (logged) but never a notification. The throttle row is written only for a send the server accepted, under a
 * lock on (org, user, conversation), so two instances cannot both send.
 */
export function emailAlertsHandler(deps: Deps): BatchHandler<AlertUsers> {
  return async (events, db, users = new Map()) => {
    for (const event of events) await alert(deps, db, event, users.get(event.id));
  };
}

/** The recipients of a batch's alerts, by event id: identity is asked before the transaction opens (issue #28 item 4). */
export type AlertUsers = Map<string, AlertRecipient | null | undefined>;

/** The notification an email may follow: a `new_message` for one user about one conversation. */
function alertOf(event: EventEnvelope) {
  if (!isEventOf(event, 'notification.created')) return undefined;
  // Data parsed by its schema (parseData); an audience-wide notification has no userId.
  const d = event.data;
  if (d.type !== 'new_message' || !isUuid(d.userId)) return undefined;
  if (!isUuid(d.resourceId) || !isUuid(event.orgId)) return undefined;
  return { ...d, userId: d.userId, resourceId: d.resourceId };
}

export function prepareEmailAlerts(recipients: AlertRecipients) {
  return async (events: EventEnvelope[]): Promise<AlertUsers> => {
    const users: AlertUsers = new Map();
    await Promise.all(
      events.map(async (event) => {
        const d = alertOf(event);
        if (d) users.set(event.id, await recipients.get(event.orgId, d.userId, `automation-event:${event.id}`, eventTraceparent(event)));
      }),
    );
    return users;
  };
}

async function alert(deps: Deps, db: PoolClient, event: EventEnvelope, user: AlertRecipient | null | undefined): Promise<void> {
  const d = alertOf(event);
  if (!d || !user || !user.active || !user.notifyByEmail || !user.email) return;

  await sent.lock(db, event.orgId, d.userId, d.resourceId);
  if (await sent.sentWithin(db, event.orgId, d.userId, d.resourceId, deps.config.EMAIL_ALERT_WINDOW_MS)) return;
  const title = d.title || 'New message';
  const preview = Array.from(d.message).slice(0, PREVIEW_CHARS).join('');
  const url = deps.config.PUBLIC_URL;
  const ok = await deps.mail.send(
    {
      to: user.email,
      subject: title,
      text:
        `${title}\n\n${preview ? `"${preview}"\n\n` : ''}Open the inbox: ${url}\n\n` +
        'You get these alerts because you turned on email notifications in your profile; turn them off there.\n',
      html:
        `<p>${escapeHtml(title)}</p>${preview ? `<blockquote>${escapeHtml(preview)}</blockquote>` : ''}` +
        `<p><a href="${escapeHtml(url)}">Open the inbox</a></p>` +
        '<p>You get these alerts because you turned on email notifications in your profile; turn them off there.</p>',
    },
    'new-message alert',
    eventTraceFields(event),
  );
  if (ok) await sent.recordSent(db, event.orgId, d.userId, d.resourceId);
}

/** Deletes throttle rows past the window every `everyMs`; returns the stop function. */
export function pruneEmailAlertsEvery(deps: Deps, everyMs = 10 * 60_000): () => void {
  const timer = setInterval(() => {
    sent.pruneOlderThan(deps.pool, deps.config.EMAIL_ALERT_WINDOW_MS).catch((err) => deps.log.warn({ err }, 'pruning email_alerts_sent failed'));
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
