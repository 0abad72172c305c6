import { invalid } from '@crm/grpc-kit';

/** A week: the longest lead time an appointment reminder may have; 0 turns reminders off. */
export const MAX_REMINDER_MINUTES = 10_080;
export const REMINDER_MESSAGE = `must be a whole number of minutes from 0 (off) to ${MAX_REMINDER_MINUTES}`;

export function reminderMinutesBefore(value: number | undefined | null): number {
  if (value === undefined || value === null) throw invalid('reminderMinutesBefore', 'is required');
  if (!Number.isInteger(value) || value < 0 || value > MAX_REMINDER_MINUTES) throw invalid('reminderMinutesBefore', REMINDER_MESSAGE);
  return value;
}
