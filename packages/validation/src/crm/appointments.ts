import { invalid } from '@crm/grpc-kit';

export const APPOINTMENT_STATUSES = ['scheduled', 'completed', 'cancelled'] as const;

/** Most characters of each free-text field of an appointment. */
export const APPOINTMENT_TEXT_MAX = { title: 200, description: 5000, location: 500, notes: 5000 } as const;

/** An appointment lasts at most a week. */
export const MAX_DURATION_MINUTES = 7 * 24 * 60;
export const DEFAULT_DURATION_MINUTES = 60;
export const DURATION_MESSAGE = `must be a whole number of minutes from 1 to ${MAX_DURATION_MINUTES}`;

/** The kind of appointment: a short slug (meeting, call…), stored lower-cased. */
export const APPOINTMENT_TYPE_PATTERN = /^[a-z0-9_-]{1,40}$/;
export const APPOINTMENT_TYPE_MESSAGE = 'must be 1-40 lowercase letters, digits, - or _ (e.g. meeting, call)';
export const DEFAULT_APPOINTMENT_TYPE = 'meeting';

/** The type as stored: trimmed, lower-cased, `meeting` when empty. */
export function appointmentType(value: string | undefined): string {
  const v = (value ?? '').trim().toLowerCase() || DEFAULT_APPOINTMENT_TYPE;
  if (!APPOINTMENT_TYPE_PATTERN.test(v)) throw invalid('type', APPOINTMENT_TYPE_MESSAGE);
  return v;
}

/** Minutes; absent or 0 (proto3's unset) is the default hour. */
export function appointmentDuration(value: number | undefined): number {
  if (value === undefined || value === 0) return DEFAULT_DURATION_MINUTES;
  if (!Number.isInteger(value) || value < 1 || value > MAX_DURATION_MINUTES) throw invalid('duration', DURATION_MESSAGE);
  return value;
}

/** A public appointment's time of day (UTC). */
export const APPOINTMENT_TIME_PATTERN = /^([01]\d|2[0-3]):[0-5]\d$/;
export const APPOINTMENT_TIME_MESSAGE = 'must be a time (HH:MM, 24-hour)';
