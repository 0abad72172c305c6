import { requireCan, requireUser, OrgContext } from '@crm/grpc-kit';
import { Queryable, withTransaction } from '@crm/db';
import { EventEnvelope, eventTraceFields, recordAudit } from '@crm/events';
import type { Deps } from '../deps';
import * as repo from './appointment-reminders.repo';
import { automationRules as rules, isUuid } from '@crm/validation';

/**
 * Appointment reminders: crm's appointment events keep a copy of each appointment's time and status here
 * (appointment_reminders), and the ReminderSender sends the `appointment.reminder` notification at
 * scheduledAt - reminderMinutesBefore to the contact's assigned user. The org setting lives here because this
 * service is the one that acts on it.
 */

/** Minutes before an appointment its reminder goes out, for an org that never set it. */
export const DEFAULT_REMINDER_MINUTES = 30;

export async function reminderMinutes(db: Queryable, orgId: string): Promise<number> {
  return (await repo.getReminderMinutes(db, orgId)) ?? DEFAULT_REMINDER_MINUTES;
}

/** GET /settings/appointments: any signed-in user of the org. */
export async function getSettings(deps: Deps, ctx: OrgContext) {
  const { orgId } = requireUser(ctx);
  return { reminderMinutesBefore: await reminderMinutes(deps.pool, orgId) };
}

/** PUT /settings/appointments: admins and owners; pending reminders move to the new lead time at once. */
export async function updateSettings(deps: Deps, ctx: OrgContext, req: { reminderMinutesBefore?: number }) {
  requireCan(ctx, 'settings:edit');
  const { orgId } = requireUser(ctx);
  const m = rules.reminderMinutesBefore(req.reminderMinutesBefore);
  await withTransaction(deps.pool, async (db) => {
    const before = await reminderMinutes(db, orgId);
    await repo.setReminderMinutes(db, orgId, m);
    if (before !== m) {
      await recordAudit(db, ctx, {
        action: 'settings.appointments_updated',
        resourceType: 'appointment_settings',
        resourceId: null,
        details: { reminderMinutesBefore: { from: before, to: m } },
      });
    }
  });
  return { reminderMinutesBefore: m };
}

/** The appointment as crm's event carries it, or undefined for an event this cannot use. */
function stateOf(event: EventEnvelope): repo.AppointmentState | undefined {
  const a = ((event.data ?? {}) as { appointment?: Record<string, unknown> }).appointment ?? {};
  const { id, contactId, scheduledAt, status, updatedAt, title } = a;
  if (typeof id !== 'string' || !isUuid(id) || typeof contactId !== 'string' || !isUuid(contactId)) return undefined;
  if (typeof scheduledAt !== 'string' || Number.isNaN(Date.parse(scheduledAt)) || typeof status !== 'string') return undefined;
  // A deletion's appointment is as it was; the event's own time orders it after every update.
  const deleted = event.type === 'appointment.deleted';
  const version = deleted ? event.occurredAt : updatedAt;
  if (typeof version !== 'string' || Number.isNaN(Date.parse(version))) return undefined;
  return {
    appointmentId: id,
    orgId: event.orgId,
    contactId,
    title: typeof title === 'string' ? title : '',
    scheduledAt,
    status: deleted ? 'deleted' : status,
    version,
  };
}

/** appointment.created / updated / deleted → the reminder row, in the consumer's transaction. */
export async function applyAppointmentEvent(deps: Deps, event: EventEnvelope, db: Queryable): Promise<void> {
  const state = stateOf(event);
  if (!state) {
    deps.log.warn(
      { eventId: event.id, type: event.type, ...eventTraceFields(event) },
      'automation: appointment event without a usable appointment ignored',
    );
    return;
  }
  await repo.applyAppointment(db, state, await reminderMinutes(db, event.orgId));
}
