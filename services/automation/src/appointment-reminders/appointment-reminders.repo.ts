import type { Queryable } from '@crm/db';

/** The channel a newly due reminder is announced on (delivered at commit), so the reminder job sends it at once. */
export const REMINDERS_CHANNEL = 'automation_appointment_reminders';

export async function getReminderMinutes(db: Queryable, orgId: string): Promise<number | undefined> {
  const { rows } = await db.query<{ m: number }>({
    name: 'automation_appointment_settings_get',
    text: 'SELECT reminder_minutes_before AS m FROM appointment_settings WHERE org_id = $1',
    values: [orgId],
  });
  return rows[0]?.m;
}

/** Store the setting and move every pending reminder of the org to it (0 clears them). */
export async function setReminderMinutes(db: Queryable, orgId: string, minutes: number): Promise<void> {
  await db.query(
    `INSERT INTO appointment_settings (org_id, reminder_minutes_before) VALUES ($1, $2)
     ON CONFLICT (org_id) DO UPDATE SET reminder_minutes_before = EXCLUDED.reminder_minutes_before, updated_at = now()`,
    [orgId, minutes],
  );
  await db.query(
    `UPDATE appointment_reminders SET remind_at = CASE WHEN $2 > 0 THEN scheduled_at - make_interval(mins => $2) END
     WHERE org_id = $1 AND status = 'scheduled' AND sent_at IS NULL`,
    [orgId, minutes],
  );
  await db.query(`SELECT pg_notify('${REMINDERS_CHANNEL}', '')`);
}

export interface AppointmentState {
  appointmentId: string;
  orgId: string;
  contactId: string;
  title: string;
  scheduledAt: string;
  /** scheduled, completed, cancelled, or deleted. */
  status: string;
  /** The appointment's updatedAt (for a deletion: the time of the event). */
  version: string;
}

/**
 * Apply what an appointment event says, unless a newer event was applied already or the appointment was deleted.
 * `minutes` is the org's setting: only a scheduled appointment with reminders on has a remind_at. A reschedule
 * clears sent_at, so the new time is reminded; anything else keeps it, so a sent reminder is never sent again.
 */
export async function applyAppointment(db: Queryable, a: AppointmentState, minutes: number): Promise<void> {
  await db.query({
    name: 'automation_appointment_reminder_upsert',
    text: `INSERT INTO appointment_reminders (appointment_id, org_id, contact_id, title, scheduled_at, status, version, remind_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, CASE WHEN $6 = 'scheduled' AND $8::int > 0 THEN $5::timestamptz - make_interval(mins => $8::int) END)
           ON CONFLICT (appointment_id) DO UPDATE SET
             contact_id = EXCLUDED.contact_id, title = EXCLUDED.title, scheduled_at = EXCLUDED.scheduled_at, status = EXCLUDED.status,
             version = EXCLUDED.version, remind_at = EXCLUDED.remind_at,
             sent_at = CASE WHEN appointment_reminders.scheduled_at = EXCLUDED.scheduled_at THEN appointment_reminders.sent_at END,
             assigned_user_id = CASE WHEN appointment_reminders.scheduled_at = EXCLUDED.scheduled_at THEN appointment_reminders.assigned_user_id END
           WHERE appointment_reminders.org_id = EXCLUDED.org_id AND appointment_reminders.status <> 'deleted'
             AND appointment_reminders.version <= EXCLUDED.version`,
    values: [a.appointmentId, a.orgId, a.contactId, a.title, a.scheduledAt, a.status, a.version, minutes],
  });
  await db.query(`SELECT pg_notify('${REMINDERS_CHANNEL}', '')`);
}

/** A deleted contact took its appointments with it (crm deletes them without an event each). */
export async function dropContact(db: Queryable, orgId: string, contactId: string): Promise<void> {
  await db.query(`UPDATE appointment_reminders SET status = 'deleted', remind_at = NULL WHERE org_id = $1 AND contact_id = $2`, [orgId, contactId]);
}

export interface DueReminder {
  appointment_id: string;
  org_id: string;
  contact_id: string;
  title: string;
  scheduled_at: Date;
}

/** Take up to `limit` due reminders under a lease (SKIP LOCKED: instances share the table; a crash lets the lease run out). */
export async function claimDue(db: Queryable, limit: number, leaseMs: number): Promise<DueReminder[]> {
  const { rows } = await db.query<DueReminder>({
    name: 'automation_appointment_reminders_claim',
    text: `UPDATE appointment_reminders r SET lease_until = now() + $2 * interval '1 millisecond'
           WHERE r.appointment_id IN (
             SELECT appointment_id FROM appointment_reminders
             WHERE sent_at IS NULL AND remind_at <= now() AND (lease_until IS NULL OR lease_until < now())
             ORDER BY remind_at LIMIT $1 FOR UPDATE SKIP LOCKED)
           RETURNING r.appointment_id, r.org_id, r.contact_id, r.title, r.scheduled_at`,
    values: [limit, leaseMs],
  });
  return rows;
}

/**
 * Milliseconds (by the database's clock) until the nearest pending reminder falls due: the earliest remind_at not
 * under a live lease, or the end of the earliest live lease (a claimed reminder whose instance crashed, or whose
 * crm call failed, comes back then). Null when nothing is pending. Both halves walk a partial index from its start.
 */
export async function nextDueInMs(db: Queryable): Promise<number | null> {
  const { rows } = await db.query<{ ms: number | null }>({
    name: 'automation_appointment_reminders_next_due',
    text: `SELECT extract(epoch FROM LEAST(
             (SELECT remind_at FROM appointment_reminders
              WHERE sent_at IS NULL AND remind_at IS NOT NULL AND (lease_until IS NULL OR lease_until < now())
              ORDER BY remind_at LIMIT 1),
             (SELECT lease_until FROM appointment_reminders
              WHERE sent_at IS NULL AND remind_at IS NOT NULL AND lease_until >= now()
              ORDER BY lease_until LIMIT 1)) - now()) * 1000 AS ms`,
  });
  const ms = rows[0]?.ms;
  return ms === null || ms === undefined ? null : Number(ms);
}

/** The claimed reminder, locked, if it is still due for the same time (not rescheduled, cancelled or sent meanwhile). */
export async function lockStillDue(db: Queryable, r: DueReminder): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 FROM appointment_reminders
     WHERE appointment_id = $1 AND sent_at IS NULL AND remind_at <= now() AND scheduled_at = $2 FOR UPDATE`,
    [r.appointment_id, r.scheduled_at],
  );
  return rows.length === 1;
}

/** Handled: sent to `userId`, or dropped (null). */
export async function markHandled(db: Queryable, appointmentId: string, userId: string | null): Promise<void> {
  await db.query('UPDATE appointment_reminders SET sent_at = now(), assigned_user_id = $2, lease_until = NULL WHERE appointment_id = $1', [
    appointmentId,
    userId,
  ]);
}
