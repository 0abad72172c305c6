import { iso } from '@crm/db';
import { invalid } from '@crm/grpc-kit';

/**
 * The period of an analytics query: [from, to). The gateway turns the caller's dateFrom/dateTo (dates cover
 * whole UTC days, timestamps are inclusive) into this half-open range; without them it is the 30 UTC days
 * ending with today.
 */
export interface Period {
  from: Date;
  to: Date;
}

export const DEFAULT_DAYS = 30;
const DAY_MS = 86_400_000;

const startOfDay = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;

/** PostgreSQL has no year 0 and reads no ISO string past year 9999: the period stays inside years 1-9999. */
const MIN_TIME = Date.parse('0001-01-01T00:00:00.000Z');
const MAX_TIME = Date.parse('9999-12-31T23:59:59.999Z');

function parse(value: string | undefined, field: string): Date | undefined {
  if (!value) return undefined;
  const t = Date.parse(value);
  if (Number.isNaN(t) || t < MIN_TIME || t > MAX_TIME)
    throw invalid(field, 'must be a date (YYYY-MM-DD) or an ISO 8601 timestamp in years 0001-9999');
  return new Date(t);
}

export function resolvePeriod(req: { dateFrom?: string; dateTo?: string }, now = Date.now()): Period {
  const givenTo = parse(req.dateTo, 'dateTo');
  const to = givenTo ?? new Date(startOfDay(now) + DAY_MS);
  const from = parse(req.dateFrom, 'dateFrom') ?? new Date(Math.max(MIN_TIME, to.getTime() - DEFAULT_DAYS * DAY_MS));
  if (to.getTime() <= from.getTime()) {
    throw givenTo ? invalid('dateTo', 'must be after dateFrom') : invalid('dateFrom', 'must not be after today when dateTo is not given');
  }
  return { from, to };
}

/** The period as shown: both ends inclusive, so it can be sent back as dateFrom/dateTo unchanged. */
export function periodOut(p: Period) {
  return { from: iso(p.from), to: iso(new Date(p.to.getTime() - 1)) };
}

/**
 * How a query reads the period: whole UTC months from the monthly aggregates, the remaining whole UTC days
 * from the daily ones, the partial days at its edges from the raw rows. Empty parts are empty ranges, so
 * the SQL keeps one shape. `days` is every whole day (for aggregates kept per day only).
 */
export interface SplitPeriod {
  /** [from, to) as YYYY-MM-DD; equal when empty. */
  days: [string, string];
  months: [string, string];
  /** Whole days outside the whole months: two [from, to) ranges, either possibly empty. */
  monthEdgeDays: [string, string, string, string];
  /** Partial days: two [from, to) ranges, either possibly empty. */
  edges: [Date, Date, Date, Date];
}

const ymd = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** The first day of the month holding `ms`, or of the next month when `up` and `ms` is not a month start. */
function monthStart(ms: number, up: boolean): number {
  const d = new Date(ms);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  return up && start < ms ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) : start;
}

export function splitPeriod(p: Period): SplitPeriod {
  const from = p.from.getTime();
  const to = p.to.getTime();
  const fullFrom = startOfDay(from) === from ? from : startOfDay(from) + DAY_MS;
  const fullTo = startOfDay(to);
  if (fullFrom >= fullTo) {
    const none = ymd(fullFrom);
    return { days: [none, none], months: [none, none], monthEdgeDays: [none, none, none, none], edges: [p.from, p.to, p.to, p.to] };
  }
  const monthFrom = monthStart(fullFrom, true);
  const monthTo = monthStart(fullTo, false);
  const edges: SplitPeriod['edges'] = [p.from, new Date(fullFrom), new Date(fullTo), p.to];
  const days: [string, string] = [ymd(fullFrom), ymd(fullTo)];
  if (monthFrom >= monthTo) return { days, months: [days[0], days[0]], monthEdgeDays: [days[0], days[1], days[1], days[1]], edges };
  return { days, months: [ymd(monthFrom), ymd(monthTo)], monthEdgeDays: [ymd(fullFrom), ymd(monthFrom), ymd(monthTo), ymd(fullTo)], edges };
}
