import { AppError } from '@crm/grpc-kit';
import { addOpenMinutes, ALWAYS_OPEN, openMsBetween, parseBusinessHours, statusAt, type BusinessHours } from './index';

const fieldOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return (err as AppError).details?.[0]?.field;
  }
  return undefined;
};

// Monday to Friday 08:00-12:00 and 13:00-17:30 in Hanoi (UTC+7, no DST); 2031-01-06 is a Monday.
const weekdays: BusinessHours = parseBusinessHours({
  timezone: 'Asia/Ho_Chi_Minh',
  days: [1, 2, 3, 4, 5].flatMap((day) => [
    { day, open: '13:00', close: '17:30' },
    { day, open: '08:00', close: '12:00' },
  ]),
  holidays: ['2031-01-08'],
});
const at = (iso: string) => new Date(iso);

describe('business hours: parsing', () => {
  it('puts ranges in order and keeps the zone as written', () => {
    expect(weekdays.timezone).toBe('Asia/Ho_Chi_Minh');
    expect(weekdays.days.slice(0, 2)).toEqual([
      { day: 1, open: '08:00', close: '12:00' },
      { day: 1, open: '13:00', close: '17:30' },
    ]);
  });

  it('names the field that is wrong', () => {
    const ok = { timezone: 'UTC', days: [{ day: 1, open: '08:00', close: '17:00' }] };
    expect(fieldOf(() => parseBusinessHours({ ...ok, timezone: 'Mars/Base' }))).toBe('timezone');
    expect(fieldOf(() => parseBusinessHours({ ...ok, timezone: '' }))).toBe('timezone');
    expect(fieldOf(() => parseBusinessHours({ ...ok, days: [{ day: 7, open: '08:00', close: '09:00' }] }))).toBe('days.0.day');
    expect(fieldOf(() => parseBusinessHours({ ...ok, days: [{ day: 1, open: '8:00', close: '09:00' }] }))).toBe('days.0.open');
    expect(fieldOf(() => parseBusinessHours({ ...ok, days: [{ day: 1, open: '08:00', close: '24:01' }] }))).toBe('days.0.close');
    expect(fieldOf(() => parseBusinessHours({ ...ok, days: [{ day: 1, open: '22:00', close: '02:00' }] }))).toBe('days.0.close');
    const overlapping = [
      { day: 2, open: '08:00', close: '12:00' },
      { day: 2, open: '11:00', close: '14:00' },
    ];
    expect(fieldOf(() => parseBusinessHours({ ...ok, days: overlapping }))).toBe('days.1');
    expect(fieldOf(() => parseBusinessHours({ ...ok, holidays: ['2031-02-30'] }))).toBe('holidays.0');
    expect(fieldOf(() => parseBusinessHours({ ...ok, holidays: ['tomorrow'] }))).toBe('holidays.0');
    // Touching ranges do not overlap.
    expect(() => parseBusinessHours({ ...ok, days: [overlapping[0], { day: 2, open: '12:00', close: '13:00' }] })).not.toThrow();
  });
});

describe('business hours: open or closed, and until when', () => {
  it('answers inside, between and after the ranges, and across the weekend and a holiday', () => {
    // Monday 09:00 Hanoi = 02:00 UTC: open until 12:00 (05:00 UTC).
    expect(statusAt(weekdays, at('2031-01-06T02:00:00Z'))).toEqual({ open: true, nextChangeAt: at('2031-01-06T05:00:00Z') });
    // Lunch: opens again at 13:00 (06:00 UTC).
    expect(statusAt(weekdays, at('2031-01-06T05:30:00Z'))).toEqual({ open: false, nextChangeAt: at('2031-01-06T06:00:00Z') });
    // Tuesday evening: Wednesday is a holiday, so the next opening is Thursday 08:00 (01:00 UTC).
    expect(statusAt(weekdays, at('2031-01-07T12:00:00Z'))).toEqual({ open: false, nextChangeAt: at('2031-01-09T01:00:00Z') });
    // Friday 17:30 Hanoi: closed until Monday 08:00.
    expect(statusAt(weekdays, at('2031-01-10T10:30:00Z'))).toEqual({ open: false, nextChangeAt: at('2031-01-13T01:00:00Z') });
  });

  it('joins a night shift across midnight and an always-open week into one opening', () => {
    const night = parseBusinessHours({
      timezone: 'UTC',
      days: [
        { day: 1, open: '22:00', close: '24:00' },
        { day: 2, open: '00:00', close: '06:00' },
      ],
    });
    expect(statusAt(night, at('2031-01-06T23:00:00Z'))).toEqual({ open: true, nextChangeAt: at('2031-01-07T06:00:00Z') });
    expect(statusAt(ALWAYS_OPEN, at('2031-01-06T23:00:00Z'))).toEqual({ open: true, nextChangeAt: null });
    expect(statusAt(parseBusinessHours({ timezone: 'UTC', days: [] }), at('2031-01-06T23:00:00Z'))).toEqual({ open: false, nextChangeAt: null });
  });

  it('follows daylight saving time (New York: 09:00 local is 14:00 UTC in winter, 13:00 UTC in summer)', () => {
    const ny = parseBusinessHours({
      timezone: 'America/New_York',
      days: [0, 1, 2, 3, 4, 5, 6].map((day) => ({ day, open: '09:00', close: '17:00' })),
    });
    expect(statusAt(ny, at('2031-01-15T12:00:00Z')).nextChangeAt).toEqual(at('2031-01-15T14:00:00Z'));
    expect(statusAt(ny, at('2031-07-15T12:00:00Z')).nextChangeAt).toEqual(at('2031-07-15T13:00:00Z'));
  });
});

describe('business hours: open time', () => {
  it('adds minutes of open time, skipping lunch, nights, weekends and holidays', () => {
    // Monday 11:50 Hanoi + 15 min: 10 before lunch, 5 after → 13:05 (06:05 UTC).
    expect(addOpenMinutes(weekdays, at('2031-01-06T04:50:00Z'), 15)).toEqual(at('2031-01-06T06:05:00Z'));
    // Tuesday 17:20 + 15: 10 on Tuesday, Wednesday is a holiday, 5 on Thursday → 08:05 (01:05 UTC).
    expect(addOpenMinutes(weekdays, at('2031-01-07T10:20:00Z'), 15)).toEqual(at('2031-01-09T01:05:00Z'));
    // From a closed time: counted from the next opening.
    expect(addOpenMinutes(weekdays, at('2031-01-11T00:00:00Z'), 30)).toEqual(at('2031-01-13T01:30:00Z'));
    expect(addOpenMinutes(ALWAYS_OPEN, at('2031-01-11T00:00:00Z'), 30)).toEqual(at('2031-01-11T00:30:00Z'));
    expect(addOpenMinutes(parseBusinessHours({ timezone: 'UTC', days: [] }), at('2031-01-11T00:00:00Z'), 30)).toBeNull();
  });

  it('measures open time between two instants', () => {
    // Friday 17:00 Hanoi to Monday 08:30: 30 min on Friday, 30 on Monday.
    expect(openMsBetween(weekdays, at('2031-01-10T10:00:00Z'), at('2031-01-13T01:30:00Z'))).toBe(60 * 60_000);
    expect(openMsBetween(ALWAYS_OPEN, at('2031-01-10T10:00:00Z'), at('2031-01-10T11:00:00Z'))).toBe(60 * 60_000);
  });
});
