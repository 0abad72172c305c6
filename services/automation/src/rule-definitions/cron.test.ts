import { CronError, nextOccurrence, parseCron } from './cron';

const next = (expr: string, tz: string, after: string) => nextOccurrence(parseCron(expr), tz, new Date(after))?.toISOString();

/** The next `n` firings after `after`. */
function series(expr: string, tz: string, after: string, n: number): string[] {
  const c = parseCron(expr);
  const out: string[] = [];
  let at = new Date(after);
  for (let i = 0; i < n; i++) {
    at = nextOccurrence(c, tz, at)!;
    out.push(at.toISOString());
  }
  return out;
}

const error = (expr: string) => {
  try {
    parseCron(expr);
  } catch (err) {
    if (err instanceof CronError) return err.message;
    throw err;
  }
  return undefined;
};

describe('cron expressions', () => {
  it('parses numbers, ranges, steps, lists, names and macros', () => {
    const c = parseCron('*/15 9-17/4 1,15 JAN-mar mon-FRI');
    expect([...c.minute.values]).toEqual([0, 15, 30, 45]);
    expect([...c.hour.values]).toEqual([9, 13, 17]);
    expect([...c.dayOfMonth.values]).toEqual([1, 15]);
    expect([...c.month.values]).toEqual([1, 2, 3]);
    expect([...c.dayOfWeek.values].sort()).toEqual([1, 2, 3, 4, 5]);
    expect([...parseCron('0 0 * * 7').dayOfWeek.values]).toEqual([0]);
    expect([...parseCron('5/20 * * * *').minute.values]).toEqual([5, 25, 45]);
    expect(parseCron('@daily')).toEqual(parseCron('0 0 * * *'));
    expect(parseCron('@hourly')).toEqual(parseCron('0 * * * *'));
  });

  it('refuses what is not standard cron, saying why', () => {
    expect(error('* * * *')).toMatch(/5 fields/);
    expect(error('* * * * * *')).toMatch(/5 fields/);
    expect(error('60 * * * *')).toMatch(/minute: 60 is outside 0-59/);
    expect(error('* 24 * * *')).toMatch(/hour/);
    expect(error('* * 0 * *')).toMatch(/day of month/);
    expect(error('* * * 13 *')).toMatch(/month/);
    expect(error('* * * * 8')).toMatch(/day of week/);
    expect(error('*/0 * * * *')).toMatch(/step/);
    expect(error('5-1 * * * *')).toMatch(/backwards/);
    expect(error('1,,2 * * * *')).toMatch(/empty/);
    expect(error('a * * * *')).toMatch(/not a number/);
    expect(error('@reboot')).toMatch(/macro/);
    expect(error('1-2-3 * * * *')).toMatch(/range/);
  });

  it('next occurrence in UTC and in a zone', () => {
    expect(next('* * * * *', 'UTC', '2026-03-01T10:00:30Z')).toBe('2026-03-01T10:01:00.000Z');
    expect(next('0 9 * * *', 'UTC', '2026-03-01T09:00:00Z')).toBe('2026-03-02T09:00:00.000Z');
    // 08:00 in Ho Chi Minh City (UTC+7) is 01:00 UTC.
    expect(next('0 8 * * *', 'Asia/Ho_Chi_Minh', '2026-03-01T00:00:00Z')).toBe('2026-03-01T01:00:00.000Z');
    expect(next('0 8 * * *', 'Asia/Ho_Chi_Minh', '2026-03-01T01:00:00Z')).toBe('2026-03-02T01:00:00.000Z');
    // Weekdays only: Friday 2026-03-06 → Monday 2026-03-09.
    expect(next('30 9 * * 1-5', 'UTC', '2026-03-06T10:00:00Z')).toBe('2026-03-09T09:30:00.000Z');
    // Last day of a short month, and Feb 29 years ahead.
    expect(next('0 0 31 * *', 'UTC', '2026-04-01T00:00:00Z')).toBe('2026-05-31T00:00:00.000Z');
    expect(next('0 0 29 2 *', 'UTC', '2026-03-01T00:00:00Z')).toBe('2028-02-29T00:00:00.000Z');
    // Never: February 30.
    expect(next('0 0 30 2 *', 'UTC', '2026-03-01T00:00:00Z')).toBeUndefined();
  });

  it('day of month and day of week both restricted: either matches (Vixie cron)', () => {
    // The 13th, or any Friday: from Tue 2026-03-10, Fri 03-13 is both; then Fri 03-20.
    expect(series('0 12 13 * 5', 'UTC', '2026-03-10T00:00:00Z', 3)).toEqual([
      '2026-03-13T12:00:00.000Z',
      '2026-03-20T12:00:00.000Z',
      '2026-03-27T12:00:00.000Z',
    ]);
    expect(next('0 12 1 * 1', 'UTC', '2026-03-28T00:00:00Z')).toBe('2026-03-30T12:00:00.000Z');
    // `*` in one of them: only the other counts.
    expect(next('0 12 * * 1', 'UTC', '2026-03-28T00:00:00Z')).toBe('2026-03-30T12:00:00.000Z');
  });

  describe('daylight saving time (America/New_York: 2026-03-08 02:00 → 03:00, 2026-11-01 02:00 → 01:00)', () => {
    const tz = 'America/New_York';

    it('a daily time in the skipped hour fires when the clocks jump, that day only', () => {
      expect(series('30 2 * * *', tz, '2026-03-06T12:00:00Z', 3)).toEqual([
        '2026-03-07T07:30:00.000Z', // 02:30 EST
        '2026-03-08T07:00:00.000Z', // 03:00 EDT: 02:30 did not exist
        '2026-03-09T06:30:00.000Z', // 02:30 EDT
      ]);
    });

    it('every 30 minutes: the skipped hour is simply not there, nothing fires twice', () => {
      expect(series('*/30 * * * *', tz, '2026-03-08T06:00:00Z', 4)).toEqual([
        '2026-03-08T06:30:00.000Z', // 01:30 EST
        '2026-03-08T07:00:00.000Z', // 03:00 EDT
        '2026-03-08T07:30:00.000Z', // 03:30 EDT
        '2026-03-08T08:00:00.000Z',
      ]);
    });

    it('a daily time in the repeated hour fires once, at its first occurrence', () => {
      expect(series('30 1 * * *', tz, '2026-10-31T12:00:00Z', 2)).toEqual([
        '2026-11-01T05:30:00.000Z', // 01:30 EDT (not again at 01:30 EST)
        '2026-11-02T06:30:00.000Z', // 01:30 EST
      ]);
    });

    it('hourly keeps its pace through both copies of the repeated hour', () => {
      expect(series('0 * * * *', tz, '2026-11-01T04:30:00Z', 3)).toEqual([
        '2026-11-01T05:00:00.000Z', // 01:00 EDT
        '2026-11-01T06:00:00.000Z', // 01:00 EST
        '2026-11-01T07:00:00.000Z', // 02:00 EST
      ]);
    });

    it('a zone whose clocks change at midnight or by half an hour (Lord Howe: +10:30 ↔ +11)', () => {
      // 2026-10-04 02:00 local → 02:30 local: 02:15 does not exist and fires at 02:30 (15:30 UTC the day before).
      expect(next('15 2 * * *', 'Australia/Lord_Howe', '2026-10-03T12:00:00Z')).toBe('2026-10-03T15:30:00.000Z');
    });
  });
});
