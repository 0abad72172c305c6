import { instantOf, instantsOf, knownZone, offsetAt, wallClock } from './zones';

const at = (iso: string) => Date.parse(iso);
/** A wall-clock reading written as if it were UTC, as the helpers take and give it. */
const wall = (reading: string) => Date.parse(`${reading}Z`);
const iso = (ms: number) => new Date(ms).toISOString();

// America/New_York: 2026-03-08 02:00 EST → 03:00 EDT, 2026-11-01 02:00 EDT → 01:00 EST.
const NY = 'America/New_York';

describe('time zones', () => {
  it('names: IANA zones and UTC are known; anything else is not', () => {
    expect(knownZone('Asia/Ho_Chi_Minh')).toBe(true);
    expect(knownZone('UTC')).toBe(true);
    expect(knownZone('Mars/Olympus')).toBe(false);
    expect(knownZone('')).toBe(false);
  });

  it('the wall clock and the offset at an instant, to the second', () => {
    expect(iso(wallClock(at('2026-03-01T01:00:00.750Z'), 'Asia/Ho_Chi_Minh'))).toBe('2026-03-01T08:00:00.000Z');
    expect(offsetAt(at('2026-03-01T01:00:00.750Z'), 'Asia/Ho_Chi_Minh')).toBe(7 * 3_600_000);
    expect(offsetAt(at('2026-03-08T06:59:59Z'), NY)).toBe(-5 * 3_600_000);
    expect(offsetAt(at('2026-03-08T07:00:00Z'), NY)).toBe(-4 * 3_600_000);
    // Lord Howe moves by half an hour.
    expect(offsetAt(at('2026-01-01T00:00:00Z'), 'Australia/Lord_Howe')).toBe(11 * 3_600_000);
    expect(offsetAt(at('2026-07-01T00:00:00Z'), 'Australia/Lord_Howe')).toBe(10.5 * 3_600_000);
  });

  it('a wall-clock reading happens once, twice in a repeated hour, never in a skipped one', () => {
    expect(instantsOf(wall('2026-03-01T08:00:00'), 'Asia/Ho_Chi_Minh').map(iso)).toEqual(['2026-03-01T01:00:00.000Z']);
    expect(instantsOf(wall('2026-03-08T02:30:00'), NY)).toEqual([]);
    expect(instantsOf(wall('2026-11-01T01:30:00'), NY).map(iso)).toEqual(['2026-11-01T05:30:00.000Z', '2026-11-01T06:30:00.000Z']);
  });

  it('the instant of a reading that happens once, either side of a change', () => {
    expect(iso(instantOf(wall('2026-03-01T08:00:00'), 'Asia/Ho_Chi_Minh'))).toBe('2026-03-01T01:00:00.000Z');
    expect(iso(instantOf(wall('2026-03-08T01:30:00'), NY))).toBe('2026-03-08T06:30:00.000Z');
    expect(iso(instantOf(wall('2026-03-08T03:30:00'), NY))).toBe('2026-03-08T07:30:00.000Z');
    expect(iso(instantOf(wall('2026-07-01T09:00:00'), NY))).toBe('2026-07-01T13:00:00.000Z');
  });

  it('a skipped reading is the moment the jump ends plus its distance into the gap, east and west of UTC alike', () => {
    // New York 2026-03-08: 02:00 EST → 03:00 EDT; 02:30 is read as 03:30 EDT (07:30Z), not 01:30 EST (06:30Z).
    expect(iso(instantOf(wall('2026-03-08T02:30:00'), NY))).toBe('2026-03-08T07:30:00.000Z');
    expect(iso(instantOf(wall('2026-03-08T02:00:00'), NY))).toBe('2026-03-08T07:00:00.000Z');
    // Berlin 2026-03-29: 02:00 CET → 03:00 CEST; 02:30 is 03:30 CEST (01:30Z).
    expect(iso(instantOf(wall('2026-03-29T02:30:00'), 'Europe/Berlin'))).toBe('2026-03-29T01:30:00.000Z');
  });
});
