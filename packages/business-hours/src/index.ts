import { invalid } from '@crm/grpc-kit';
import { instantOf, knownZone, wallClock } from './zones';

export { instantOf, instantsOf, knownZone, offsetAt, wallClock } from './zones';

/**
 * Business hours as the API writes them: opening ranges per weekday (0 = Sunday) in an IANA time zone, and whole
 * days closed. A range ends at or before midnight ("24:00" is the end of the day); a night shift is two ranges, one
 * each side of midnight, which this code joins into one opening.
 */
export interface OpeningRange {
  day: number;
  open: string;
  close: string;
}
export interface BusinessHours {
  timezone: string;
  days: OpeningRange[];
  holidays: string[];
}

/** Never configured: open all the time, so nothing answers "closed" and no due time skips anything. */
export const ALWAYS_OPEN: BusinessHours = {
  timezone: 'UTC',
  days: [0, 1, 2, 3, 4, 5, 6].map((day) => ({ day, open: '00:00', close: '24:00' })),
  holidays: [],
};

export const MAX_RANGES = 42;
export const MAX_HOLIDAYS = 400;
/** How far ahead the next opening is looked for: a year of holidays and then a week. */
const HORIZON_DAYS = 400;
const MINUTES_PER_DAY = 24 * 60;
const DAY_MS = 86_400_000;

const HH_MM = /^([01]\d|2[0-3]):([0-5]\d)$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

const minutesOf = (hhmm: string) => (hhmm === '24:00' ? MINUTES_PER_DAY : Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3)));

/** A request's hours, checked field by field (400 naming the field) and put in order: ranges by day and time, holidays sorted. */
export function parseBusinessHours(input: { timezone?: string; days?: Array<Partial<OpeningRange>>; holidays?: string[] }): BusinessHours {
  const timezone = typeof input.timezone === 'string' ? input.timezone.trim() : '';
  if (!timezone || timezone.length > 64 || !knownZone(timezone)) throw invalid('timezone', 'must be an IANA time zone such as Asia/Ho_Chi_Minh');
  const raw = input.days ?? [];
  if (raw.length > MAX_RANGES) throw invalid('days', `must list at most ${MAX_RANGES} opening ranges`);
  const days = raw.map((r, i) => {
    if (!Number.isInteger(r.day) || r.day! < 0 || r.day! > 6) throw invalid(`days.${i}.day`, 'must be a weekday from 0 (Sunday) to 6 (Saturday)');
    if (typeof r.open !== 'string' || !HH_MM.test(r.open)) throw invalid(`days.${i}.open`, 'must be a time HH:MM from 00:00 to 23:59');
    if (typeof r.close !== 'string' || !(HH_MM.test(r.close) || r.close === '24:00'))
      throw invalid(`days.${i}.close`, 'must be a time HH:MM from 00:01 to 24:00');
    if (minutesOf(r.close) <= minutesOf(r.open))
      throw invalid(`days.${i}.close`, 'must be after open (a night shift is two ranges, one each side of midnight)');
    return { day: r.day!, open: r.open, close: r.close, index: i };
  });
  days.sort((a, b) => a.day - b.day || minutesOf(a.open) - minutesOf(b.open));
  for (let k = 1; k < days.length; k++) {
    const [prev, cur] = [days[k - 1], days[k]];
    if (prev.day === cur.day && minutesOf(cur.open) < minutesOf(prev.close)) {
      throw invalid(`days.${Math.max(prev.index, cur.index)}`, `overlaps another range of day ${cur.day} (${prev.open}-${prev.close})`);
    }
  }
  const rawHolidays = input.holidays ?? [];
  if (rawHolidays.length > MAX_HOLIDAYS) throw invalid('holidays', `must list at most ${MAX_HOLIDAYS} days`);
  rawHolidays.forEach((h, i) => {
    const m = typeof h === 'string' ? DATE.exec(h) : null;
    const valid = m && new Date(Date.UTC(+m[1], +m[2] - 1, +m[3])).toISOString().slice(0, 10) === h;
    if (!valid) throw invalid(`holidays.${i}`, 'must be a date YYYY-MM-DD');
  });
  return { timezone, days: days.map(({ day, open, close }) => ({ day, open, close })), holidays: [...new Set(rawHolidays)].sort() };
}

/** One opening as instants [start, end), in time order. */
interface Opening {
  start: number;
  end: number;
}

/**
 * The openings from the local day holding `fromMs` onwards, for HORIZON_DAYS, joined where one ends as the next
 * starts (24:00 then 00:00, or 12:00 then 12:00).
 */
function* openings(hours: BusinessHours, fromMs: number): Generator<Opening> {
  const holidays = new Set(hours.holidays);
  const byDay: Array<Array<[number, number]>> = [[], [], [], [], [], [], []];
  for (const r of hours.days) byDay[r.day].push([minutesOf(r.open), minutesOf(r.close)]);
  const firstDay = Math.floor(wallClock(fromMs, hours.timezone) / DAY_MS) * DAY_MS;
  let pending: Opening | undefined;
  for (let d = 0; d < HORIZON_DAYS; d++) {
    const dayStart = firstDay + d * DAY_MS;
    if (holidays.has(new Date(dayStart).toISOString().slice(0, 10))) continue;
    for (const [open, close] of byDay[new Date(dayStart).getUTCDay()]) {
      const start = instantOf(dayStart + open * 60_000, hours.timezone);
      const end = instantOf(dayStart + close * 60_000, hours.timezone);
      if (pending && start <= pending.end) {
        pending.end = Math.max(pending.end, end);
        continue;
      }
      if (pending) yield pending;
      pending = { start, end };
    }
  }
  // The last opening may go on past the horizon: unbounded.
  if (pending) yield { start: pending.start, end: Number.POSITIVE_INFINITY };
}

/** Whether the hours are open at `at`, and when that next changes (null: not within a year, or never). */
export function statusAt(hours: BusinessHours, at: Date): { open: boolean; nextChangeAt: Date | null } {
  const t = at.getTime();
  for (const o of openings(hours, t - DAY_MS)) {
    if (o.end <= t) continue;
    if (o.start <= t) return { open: true, nextChangeAt: Number.isFinite(o.end) ? new Date(o.end) : null };
    return { open: false, nextChangeAt: new Date(o.start) };
  }
  return { open: false, nextChangeAt: null };
}

/**
 * The instant `minutes` of open time after `from` (an SLA's due time in business hours); null when the hours do not
 * hold that much open time within a year.
 */
export function addOpenMinutes(hours: BusinessHours, from: Date, minutes: number): Date | null {
  let left = minutes * 60_000;
  const t = from.getTime();
  for (const o of openings(hours, t - DAY_MS)) {
    if (o.end <= t) continue;
    const start = Math.max(o.start, t);
    if (o.end - start >= left) return new Date(start + left);
    left -= o.end - start;
  }
  return null;
}

/** Open time between two instants, in ms (reports that leave closed hours out). */
export function openMsBetween(hours: BusinessHours, from: Date, to: Date): number {
  const [a, b] = [from.getTime(), to.getTime()];
  let total = 0;
  for (const o of openings(hours, a - DAY_MS)) {
    if (o.start >= b) break;
    if (o.end <= a) continue;
    total += Math.min(o.end, b) - Math.max(o.start, a);
  }
  return total;
}
