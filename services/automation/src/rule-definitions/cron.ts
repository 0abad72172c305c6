/**
 * Five-field cron expressions (minute hour day-of-month month day-of-week) evaluated in an IANA time zone, for the
 * schedule trigger. Standard syntax: `*`, numbers, ranges `a-b`, steps `*\/n` and `a-b/n` (`a/n`: from a to the end),
 * lists `a,b-c`, month and weekday names (JAN…DEC, SUN…SAT), 0 and 7 both Sunday, and the macros @yearly (@annually),
 * @monthly, @weekly, @daily (@midnight) and @hourly. As in Vixie cron, when both day-of-month and day-of-week are
 * restricted (neither starts with `*`) a day matching either one matches.
 *
 * Daylight saving time, as cron users expect it:
 * - a local time that does not exist (the hour skipped in spring) fires once, at the instant the clocks jump (so a daily
 *   02:30 job still runs that day, at 03:00);
 * - a local time that occurs twice (the hour repeated in autumn) fires at its first occurrence only, unless the hour
 *   field starts with `*` (an hourly or every-n-minutes schedule keeps its pace through both copies of the hour).
 * The zone's offsets come from Intl, through the zone helpers of @crm/business-hours.
 */

import { instantsOf, offsetAt } from '@crm/business-hours';

export class CronError extends Error {}

interface Field {
  values: Set<number>;
  /** Written starting with `*` (day fields: unrestricted for the day-of-month / day-of-week rule). */
  star: boolean;
}

export interface Cron {
  minute: Field;
  hour: Field;
  dayOfMonth: Field;
  month: Field;
  dayOfWeek: Field;
}

const MACROS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};
const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
const FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS, base: 1 },
  { name: 'day of week', min: 0, max: 7, names: DAYS, base: 0 },
] as const;

function parseField(text: string, spec: (typeof FIELDS)[number]): Field {
  const values = new Set<number>();
  const num = (s: string): number => {
    const names = 'names' in spec ? spec.names : undefined;
    const byName = names ? (names as readonly string[]).indexOf(s.toUpperCase()) : -1;
    if (byName >= 0) return byName + ('base' in spec ? spec.base : 0);
    if (!/^\d{1,2}$/.test(s)) throw new CronError(`${spec.name}: "${s}" is not a number${names ? ' or a name' : ''}`);
    const n = Number(s);
    if (n < spec.min || n > spec.max) throw new CronError(`${spec.name}: ${n} is outside ${spec.min}-${spec.max}`);
    return n;
  };
  for (const part of text.split(',')) {
    if (part === '') throw new CronError(`${spec.name}: empty list item`);
    const [range, stepText, extra] = part.split('/');
    if (extra !== undefined) throw new CronError(`${spec.name}: "${part}" has more than one /`);
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d{1,2}$/.test(stepText) || Number(stepText) === 0)
        throw new CronError(`${spec.name}: step "${stepText}" must be a whole number from 1`);
      step = Number(stepText);
    }
    let lo: number;
    let hi: number;
    if (range === '*') {
      lo = spec.min;
      hi = spec.max;
    } else if (range.includes('-')) {
      const [a, b, more] = range.split('-');
      if (more !== undefined) throw new CronError(`${spec.name}: "${range}" is not a range`);
      lo = num(a);
      hi = num(b);
      if (hi < lo) throw new CronError(`${spec.name}: range ${range} runs backwards`);
    } else {
      lo = num(range);
      hi = stepText !== undefined ? spec.max : lo;
    }
    for (let v = lo; v <= hi; v += step) values.add(v);
  }
  return { values, star: text.startsWith('*') };
}

/** Parse an expression; throws CronError saying what is wrong. */
export function parseCron(expression: string): Cron {
  const text = expression.trim();
  const expanded = MACROS[text.toLowerCase()] ?? text;
  if (expanded.startsWith('@')) throw new CronError(`unknown macro ${text} (use @yearly, @monthly, @weekly, @daily or @hourly)`);
  const parts = expanded.split(/\s+/);
  if (parts.length !== 5) throw new CronError(`must have 5 fields (minute hour day-of-month month day-of-week), not ${parts.length}`);
  const [minute, hour, dayOfMonth, month, dayOfWeek] = parts.map((p, i) => parseField(p, FIELDS[i]));
  // 7 is Sunday too.
  if (dayOfWeek.values.delete(7)) dayOfWeek.values.add(0);
  return { minute, hour, dayOfMonth, month, dayOfWeek };
}

const MINUTE = 60_000;
const DAY = 86_400_000;

/** For a wall time in a skipped hour: the instant the clocks jumped (the first instant after the gap). */
function gapEnd(timeZone: string, local: number): number {
  const before = offsetAt(local - DAY, timeZone);
  const after = offsetAt(local + DAY, timeZone);
  // The jump is between the instant the new clock read `local` and the one the old clock would have.
  let lo = local - Math.max(before, after);
  let hi = local - Math.min(before, after);
  while (hi - lo > MINUTE) {
    const mid = lo + Math.floor((hi - lo) / 2 / MINUTE) * MINUTE;
    if (offsetAt(mid, timeZone) === before) lo = mid;
    else hi = mid;
  }
  return hi;
}

function dayMatches(c: Cron, y: number, m: number, d: number): boolean {
  if (!c.month.values.has(m)) return false;
  const dom = c.dayOfMonth.values.has(d);
  const dow = c.dayOfWeek.values.has(new Date(Date.UTC(y, m - 1, d)).getUTCDay());
  if (!c.dayOfMonth.star && !c.dayOfWeek.star) return dom || dow;
  return dom && dow;
}

/** Days searched ahead for an occurrence: Feb 29 of a leap year may be 8 years away (2096 → 2104). */
const HORIZON_DAYS = 366 * 8 + 2;

/** How far a zone's offset moves at one change, at most (DST and the rare zone that changed its standard time). */
const SHIFT = 3 * 3_600_000;

/** The first instant strictly after `after` at which the schedule fires in `timeZone`, or undefined if it never does. */
export function nextOccurrence(c: Cron, timeZone: string, after: Date): Date | undefined {
  const from = after.getTime();
  const localFrom = from + offsetAt(from, timeZone);
  // Local calendar days from the day before `after`'s, in order; wall times well before `after`'s are not looked at.
  const start = new Date(localFrom - DAY);
  const hours = [...c.hour.values].sort((a, b) => a - b);
  const minutes = [...c.minute.values].sort((a, b) => a - b);
  let best: number | undefined;
  let bestLocal = Infinity;
  for (let i = 0; i <= HORIZON_DAYS; i++) {
    const day = Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate() + i);
    if (day > bestLocal + SHIFT) break;
    const date = new Date(day);
    if (!dayMatches(c, date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate())) continue;
    for (const h of hours) {
      for (const mi of minutes) {
        const local = day + h * 3_600_000 + mi * MINUTE;
        if (local < localFrom - SHIFT) continue;
        if (local > bestLocal + SHIFT) break;
        const found = instantsOf(local, timeZone);
        const candidates = found.length === 0 ? [gapEnd(timeZone, local)] : c.hour.star ? found : [found[0]];
        for (const t of candidates) {
          if (t > from && (best === undefined || t < best)) {
            best = t;
            bestLocal = local;
          }
        }
      }
    }
  }
  return best === undefined ? undefined : new Date(best);
}
