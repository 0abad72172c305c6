import { directDatabaseUrl } from '@crm/config';
import { ClaimLoop, withTransaction } from '@crm/db';
import { status as grpcStatus } from '@crm/grpc-kit';
import type { crm } from '@crm/proto-types';
import type { Deps } from '../deps';
import * as repo from './appointment-reminders.repo';
import { isUuid } from '@crm/validation';
import { notifications } from '../notifications';

/** A claimed reminder is another instance's to retry after this long (a crash, or crm not answering). */
const LEASE_MS = 60_000;

type ContactBrief = crm.ContactBrief__Output;

/** "2031-03-10 09:30 UTC": the time as stored; the client shows it in the reader's zone. */
function utcText(at: Date): string {
  return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * Sends due appointment reminders (appointment_reminders.remind_at reached) as `appointment.reminder`
 * notifications to the contact's assigned user, asked of crm at send time so a reassignment since the
 * appointment was made is honoured. The notification and `sent_at` commit together and the notification id
 * derives from (appointment, scheduled time), so a crash or a second instance never reminds twice for one time.
 */
export class ReminderSender {
  private readonly loop: ClaimLoop<repo.DueReminder>;

  constructor(private readonly deps: Deps) {
    this.loop = new ClaimLoop({
      name: 'appointment reminders',
      databaseUrl: directDatabaseUrl(deps.config),
      channel: repo.REMINDERS_CHANNEL,
      // The timer facility: sleeps until the nearest remind_at (or a lease running out); every change that writes
      // or moves a reminder NOTIFYs the channel, so an earlier one re-arms it. No poll.
      nextDueInMs: () => repo.nextDueInMs(deps.pool),
      concurrency: 4,
      claim: (free) => repo.claimDue(deps.pool, free, LEASE_MS),
      work: (r) => this.send(r),
      describe: (r) => ({ appointmentId: r.appointment_id, orgId: r.org_id }),
      log: deps.log,
    });
  }

  start(): Promise<void> {
    return this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async send(r: repo.DueReminder): Promise<void> {
    // Begun already (the service was down, or a longer lead time was set): nothing worth sending, nobody to ask.
    if (r.scheduled_at.getTime() <= Date.now()) return this.drop(r);
    let contact: ContactBrief | undefined;
    try {
      const ctx = await this.deps.remote.actingFor(r.org_id, `appointment-reminder:${r.appointment_id}`);
      contact = await this.deps.remote.crm().GetContactBrief({ id: r.contact_id }, ctx);
    } catch (err) {
      if ((err as { code?: number }).code !== grpcStatus.NOT_FOUND) {
        // crm unreachable: the lease runs out and the reminder is claimed again.
        this.deps.log.warn({ err, appointmentId: r.appointment_id }, 'appointment reminder: crm did not answer; retrying');
        return;
      }
    }
    const userId = contact?.assignedUserId && isUuid(contact.assignedUserId) ? contact.assignedUserId.toLowerCase() : null;
    await withTransaction(this.deps.pool, async (db) => {
      if (!(await repo.lockStillDue(db, r))) return;
      const minutesLeft = Math.max(0, Math.round((r.scheduled_at.getTime() - Date.now()) / 60_000));
      // No assigned user (or the contact is gone): no reminder.
      if (!userId) {
        await repo.markHandled(db, r.appointment_id, null);
        return;
      }
      const what = r.title.trim() || 'Appointment';
      const who = contact?.name?.trim() || 'a contact';
      await notifications.create(db, notifications.derivedId('appointment.reminder', r.appointment_id, r.scheduled_at.toISOString()), {
        orgId: r.org_id,
        userId,
        type: 'appointment.reminder',
        title: `Upcoming appointment with ${who}`,
        message: `${what} starts at ${utcText(r.scheduled_at)}${minutesLeft > 0 ? `, in ${minutesLeft} minute${minutesLeft === 1 ? '' : 's'}` : ', now'}.`,
        resourceId: r.appointment_id,
        // The reminder's timer: a trace of its own.
        traceparent: undefined,
      });
      await repo.markHandled(db, r.appointment_id, userId);
    });
  }

  private async drop(r: repo.DueReminder): Promise<void> {
    await withTransaction(this.deps.pool, async (db) => {
      if (await repo.lockStillDue(db, r)) await repo.markHandled(db, r.appointment_id, null);
    });
  }
}
