/**
 * Appointment reminders: the org's setting (minutes before; GET/PUT /settings/appointments), the reminder rows that
 * crm's appointment events keep, and the sender that notifies when one falls due.
 */
export * as appointmentReminders from './appointment-reminders';
export { applyAppointmentEvent } from './appointment-reminders';
export { dropContact as dropContactReminders } from './appointment-reminders.repo';
export { ReminderSender } from './reminder-sender';
