import { randomUUID } from 'node:crypto';
import { AppError, invalid, notFound, requireCan, OrgContext } from '@crm/grpc-kit';
import { readKeyset, withTransaction } from '@crm/db';
import { enqueueEvent } from '@crm/events';
import type { crm } from '@crm/proto-types';
import type { ContactsDeps } from '../deps';
import { recordActivity } from '../db/activities.repo';
import * as repo from '../db/appointments.repo';
import { findContact } from '../db/contacts.repo';
import { isoTimestamp, isUuid, oneOf, optionalText, requireUuid, rules } from '../../shared';
import { viewerOf } from './visibility';

/** scheduled → completed | cancelled; completed and cancelled are final. */
const MOVES: Record<string, readonly string[]> = { scheduled: ['completed', 'cancelled'], completed: [], cancelled: [] };

async function assertAssignee(deps: ContactsDeps, ctx: OrgContext, userId: string | null | undefined) {
  if (!userId) return;
  if (!isUuid(userId)) throw invalid('assignedUserId', 'is not a user of this organization');
  await deps.users.assertAssignable(ctx, userId, 'assignedUserId');
}

/** The org's appointment or 404; under inbox visibility an agent's appointment of a hidden contact is 404 too. */
async function load(deps: ContactsDeps, orgId: string, id: string, viewer?: string) {
  const row = isUuid(id) ? await repo.findAppointment(deps.pool, orgId, id, false, viewer) : undefined;
  if (!row) throw notFound('Appointment');
  return repo.toAppointment(row);
}

export async function get(deps: ContactsDeps, ctx: OrgContext, id: string) {
  return load(deps, ctx.orgId, id, viewerOf(ctx));
}

export async function list(deps: ContactsDeps, ctx: OrgContext, req: crm.ListAppointmentsRequest__Output) {
  const { orgId } = ctx;
  const f: repo.AppointmentFilter = {
    page: Math.max(1, req.page || 1),
    limit: Math.min(100, Math.max(1, req.limit || 50)),
    skipTotal: req.skipTotal,
    viewer: viewerOf(ctx),
  };
  if (req.status) f.status = oneOf(req.status, rules.APPOINTMENT_STATUSES, 'status');
  if (req.contactId) f.contactId = requireUuid(req.contactId, 'contactId');
  if (req.dateFrom) f.dateFrom = isoTimestamp(req.dateFrom, 'dateFrom');
  if (req.dateTo) f.dateTo = isoTimestamp(req.dateTo, 'dateTo');
  if (f.dateFrom && f.dateTo && f.dateFrom > f.dateTo) throw invalid('dateTo', 'must not be before dateFrom');
  if (req.keyset) return repo.listAppointmentsAfter(deps.pool, orgId, f, readKeyset(req.keyset, invalid));
  return repo.listAppointments(deps.pool, orgId, f);
}

export async function create(deps: ContactsDeps, ctx: OrgContext, req: crm.CreateAppointmentRequest__Output) {
  requireCan(ctx, 'contacts:write');
  const { orgId } = ctx;
  if (!req.contactId) throw invalid('contactId', 'is required');
  const a: repo.NewAppointment = {
    id: randomUUID(),
    orgId,
    contactId: req.contactId,
    title: optionalText(req.title, 'title', rules.APPOINTMENT_TEXT_MAX.title),
    description: optionalText(req.description, 'description', rules.APPOINTMENT_TEXT_MAX.description),
    scheduledAt: isoTimestamp(req.scheduledAt, 'scheduledAt'),
    duration: rules.appointmentDuration(req.duration),
    type: rules.appointmentType(req.type),
    location: optionalText(req.location, 'location', rules.APPOINTMENT_TEXT_MAX.location),
    assignedUserId: req.assignedUserId || null,
    notes: optionalText(req.notes, 'notes', rules.APPOINTMENT_TEXT_MAX.notes),
  };
  // A contact hidden from the agent by inbox visibility is as unknown as another org's.
  const contact = isUuid(a.contactId) ? await findContact(deps.pool, orgId, a.contactId, false, viewerOf(ctx)) : undefined;
  if (!contact) throw notFound('Contact');
  await assertAssignee(deps, ctx, a.assignedUserId);
  const appointment = await withTransaction(deps.pool, async (tx) => {
    try {
      await repo.insertAppointment(tx, a);
    } catch (err) {
      // The contact was deleted since we looked.
      if ((err as { code?: string }).code === '23503') throw notFound('Contact');
      throw err;
    }
    const created = repo.toAppointment((await repo.findAppointment(tx, orgId, a.id))!);
    await recordActivity(tx, {
      orgId,
      contactId: a.contactId,
      type: 'appointment_created',
      data: `${created.title || created.type} at ${created.scheduledAt}`,
    });
    const event = await enqueueEvent(tx, { type: 'appointment.created', orgId, data: { appointment: created }, traceparent: ctx.traceparent });
    await deps.contactWriter.inTrace(ctx.traceparent).recordEventFacts(tx, [event]);
    return created;
  });
  return appointment;
}

export async function update(deps: ContactsDeps, ctx: OrgContext, req: crm.UpdateAppointmentRequest__Output) {
  requireCan(ctx, 'contacts:write');
  const { orgId } = ctx;
  const viewer = viewerOf(ctx);
  await load(deps, orgId, req.id, viewer);
  const p: repo.AppointmentPatch = {};
  if (req.title !== undefined) p.title = optionalText(req.title, 'title', rules.APPOINTMENT_TEXT_MAX.title);
  if (req.description !== undefined) p.description = optionalText(req.description, 'description', rules.APPOINTMENT_TEXT_MAX.description);
  if (req.scheduledAt !== undefined) p.scheduledAt = isoTimestamp(req.scheduledAt, 'scheduledAt');
  if (req.duration !== undefined) p.duration = rules.appointmentDuration(req.duration);
  if (req.type !== undefined) p.type = rules.appointmentType(req.type);
  if (req.location !== undefined) p.location = optionalText(req.location, 'location', rules.APPOINTMENT_TEXT_MAX.location);
  if (req.assignedUserId !== undefined) p.assignedUserId = req.assignedUserId || null;
  if (req.status !== undefined) p.status = oneOf(req.status, rules.APPOINTMENT_STATUSES, 'status');
  if (req.notes !== undefined) p.notes = optionalText(req.notes, 'notes', rules.APPOINTMENT_TEXT_MAX.notes);
  await assertAssignee(deps, ctx, p.assignedUserId);
  return withTransaction(deps.pool, async (tx) => {
    const row = await repo.findAppointment(tx, orgId, req.id, true, viewer);
    if (!row) throw notFound('Appointment');
    if (p.status !== undefined && p.status !== row.status && !MOVES[row.status].includes(p.status)) {
      throw new AppError('failed_precondition', `A ${row.status} appointment cannot become ${p.status}`, {
        code: 'invalid_transition',
        details: [{ field: 'status', message: `cannot change from ${row.status} to ${p.status}` }],
      });
    }
    if (p.scheduledAt !== undefined && p.scheduledAt.getTime() !== row.scheduled_at.getTime() && row.status !== 'scheduled') {
      throw new AppError('failed_precondition', `A ${row.status} appointment cannot be rescheduled`, {
        code: 'invalid_transition',
        details: [{ field: 'scheduledAt', message: `cannot reschedule a ${row.status} appointment` }],
      });
    }
    await repo.updateAppointment(tx, orgId, req.id, p);
    const updated = repo.toAppointment((await repo.findAppointment(tx, orgId, req.id))!);
    const what: string[] = [];
    if (updated.status !== row.status) what.push(updated.status);
    if (p.scheduledAt && p.scheduledAt.getTime() !== row.scheduled_at.getTime()) what.push(`rescheduled to ${updated.scheduledAt}`);
    if (what.length)
      await recordActivity(tx, {
        orgId,
        contactId: row.contact_id,
        type: 'appointment_updated',
        data: `${updated.title || updated.type}: ${what.join(', ')}`,
      });
    const changes = changedFields(repo.toAppointment(row), updated);
    if (changes.length)
      await enqueueEvent(tx, { type: 'appointment.updated', orgId, data: { appointment: updated, changes }, traceparent: ctx.traceparent });
    return updated;
  });
}

/** The fields a client can change, compared as the API shows them (scheduledAt as ISO text). */
const CHANGEABLE = ['title', 'description', 'scheduledAt', 'duration', 'type', 'location', 'assignedUserId', 'status', 'notes'] as const;

function changedFields(before: ReturnType<typeof repo.toAppointment>, after: ReturnType<typeof repo.toAppointment>): string[] {
  return CHANGEABLE.filter((f) => before[f] !== after[f]);
}

/** DELETE /appointments/:id: gone with its reminder; the event carries the appointment as it was. */
export async function remove(deps: ContactsDeps, ctx: OrgContext, id: string) {
  requireCan(ctx, 'contacts:write');
  const { orgId } = ctx;
  const viewer = viewerOf(ctx);
  if (!isUuid(id)) throw notFound('Appointment');
  await withTransaction(deps.pool, async (tx) => {
    const row = await repo.findAppointment(tx, orgId, id, true, viewer);
    if (!row) throw notFound('Appointment');
    const gone = repo.toAppointment(row);
    await repo.deleteAppointment(tx, orgId, id);
    await recordActivity(tx, {
      orgId,
      contactId: row.contact_id,
      type: 'appointment_deleted',
      data: `${gone.title || gone.type} at ${gone.scheduledAt}`,
    });
    await enqueueEvent(tx, { type: 'appointment.deleted', orgId, data: { appointment: gone }, traceparent: ctx.traceparent });
  });
  return { ok: true, message: 'Appointment deleted' };
}
