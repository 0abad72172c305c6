-- Appointment reminders. The org's setting: how many minutes before an appointment its contact's assigned user is
-- reminded (0 = never). No row: the default (domain/appointment-reminders.ts).
CREATE TABLE appointment_settings (
  org_id                   uuid PRIMARY KEY,
  reminder_minutes_before  integer NOT NULL CHECK (reminder_minutes_before BETWEEN 0 AND 10080),
  updated_at               timestamptz NOT NULL DEFAULT now()
);

-- One row per crm appointment, kept up to date from appointment.created / updated / deleted. `version` is the
-- appointment's updatedAt of the last event applied, so an older event delivered late changes nothing; a deleted
-- appointment stays as a tombstone (status 'deleted') so a late created/updated event cannot bring it back.
-- `remind_at` is null when there is nothing to send (not scheduled, reminders off); `sent_at` is when the reminder
-- was handled (sent to `assigned_user_id`, or dropped: nobody assigned, contact gone, appointment already begun).
-- A reschedule to another time clears sent_at: the new time gets its own reminder.
CREATE TABLE appointment_reminders (
  appointment_id    uuid PRIMARY KEY,
  org_id            uuid NOT NULL,
  contact_id        uuid NOT NULL,
  title             text NOT NULL DEFAULT '',
  scheduled_at      timestamptz NOT NULL,
  status            text NOT NULL,
  version           timestamptz NOT NULL,
  remind_at         timestamptz,
  lease_until       timestamptz,
  assigned_user_id  uuid,
  sent_at           timestamptz
);
CREATE INDEX appointment_reminders_due_idx ON appointment_reminders (remind_at) WHERE sent_at IS NULL AND remind_at IS NOT NULL;
CREATE INDEX appointment_reminders_contact_idx ON appointment_reminders (org_id, contact_id);
