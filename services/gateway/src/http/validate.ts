import type { Request } from 'express';
import { z } from 'zod';
import { badRequest, zodIssues } from './errors';

/** `['actions', 1, 'userId']` → `actions[1].userId`: a field named the way a client wrote it. */
export function fieldPath(path: PropertyKey[]): string {
  return path.reduce<string>((out, p) => (typeof p === 'number' ? `${out}[${p}]` : out ? `${out}.${String(p)}` : String(p)), '');
}

/**
 * What a body schema parses: `{}` without a body (express leaves req.body undefined), else the parsed JSON, which is
 * `null` only for a route with a parser of its own that admits it (an account's business hours).
 */
const bodyOf = (req: Request): unknown => (req.body === undefined ? {} : req.body);

/** The JSON body, with array items named by index in the 400 (`actions[2].assigneeId`) as rules and macros do. */
export function indexedBody<S extends z.ZodType>(req: Request, schema: S): z.infer<S> {
  const parsed = schema.safeParse(bodyOf(req));
  if (!parsed.success) throw badRequest(parsed.error.issues.map((i) => ({ field: fieldPath(i.path) || 'body', message: i.message })));
  return parsed.data;
}

/** Parse the JSON body with a zod schema; a 400 names every bad field. */
export function body<S extends z.ZodType>(req: Request, schema: S): z.infer<S> {
  const parsed = schema.safeParse(bodyOf(req));
  if (!parsed.success) throw badRequest(zodIssues(parsed.error));
  return parsed.data;
}

export function query<S extends z.ZodType>(req: Request, schema: S): z.infer<S> {
  return parseQuery(req.query ?? {}, schema);
}

/** Query parameters given as a record (a saved view's merged with the request's): a 400 names every bad one. */
export function parseQuery<S extends z.ZodType>(params: Record<string, unknown>, schema: S): z.infer<S> {
  const parsed = schema.safeParse(params);
  if (!parsed.success) throw badRequest(zodIssues(parsed.error));
  return parsed.data;
}

/** The largest value a proto int32 (page, limit, offset) holds; beyond it a page number wraps negative. */
export const INT32_MAX = 2 ** 31 - 1;

/**
 * A named path parameter (`/users/:id` → id). Express types a handler's params as `string | string[]` when
 * middleware comes before it; a `:name` segment is always one string (only `*name` wildcards are arrays).
 */
export function pathParam(req: Request, name: string): string {
  const v = req.params[name];
  return Array.isArray(v) ? v.join('/') : (v ?? '');
}

/**
 * page/limit for internal lists: non-numeric values are a 400, out-of-range ones are clamped
 * (page ≥ 1, 1 ≤ limit ≤ max, and page small enough that the row offset (page - 1) × limit fits an int32,
 * so a huge page is an empty last page rather than a wrapped, negative OFFSET).
 */
export function pageParams(req: Request, defaultLimit: number, maxLimit = 100): { page: number; limit: number } {
  const num = (name: string, fallback: number) => {
    const raw = req.query[name];
    if (raw === undefined || raw === '') return fallback;
    if (typeof raw !== 'string' || !/^-?\d+$/.test(raw)) throw badRequest([{ field: name, message: 'must be an integer' }]);
    // A 400-digit number is Infinity here, and clamped like any other huge one.
    return Number(raw);
  };
  const limit = Math.min(maxLimit, Math.max(1, num('limit', defaultLimit)));
  const page = Math.min(Math.floor(INT32_MAX / limit), Math.max(1, num('page', 1)));
  return { page, limit };
}

/** An absolute http: or https: URL with a host. */
export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * Every URL a client gives us is shown back to browsers (an avatar's src, a link) or dialled by a service,
 * so only http(s) is accepted: javascript:, data:, file: and the like would run or read in someone else's
 * page. `allowEmpty` for fields where "" clears the value.
 */
function httpUrl(opts: { max?: number; allowEmpty?: boolean } = {}) {
  const max = opts.max ?? 2000;
  return z
    .string({ error: 'must be a string' })
    .trim()
    .max(max, `must be at most ${max} characters`)
    .refine(
      (v) => (opts.allowEmpty && v === '') || isHttpUrl(v),
      opts.allowEmpty ? 'must be an http or https URL (or empty)' : 'must be an http or https URL',
    );
}

// ------------------------------------------------------------------------------------------- dates

/** The years a date may have: what JavaScript, PostgreSQL and ISO 8601 without an expanded year all represent. */
const MIN_TIME = new Date('0001-01-01T00:00:00.000Z').getTime();
const MAX_TIME = new Date('9999-12-31T23:59:59.999Z').getTime();
const DAY_MS = 86_400_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** ISO 8601 date-time: a real date part, HH:MM, optional seconds and fraction, optional zone (Z or ±HH:MM). */
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[T ]([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-]([01]\d|2[0-3]):?[0-5]\d)?$/i;
const DATE_MESSAGE = 'must be a date (YYYY-MM-DD) in years 0001-9999';
const DATE_OR_TIME_MESSAGE = 'must be a date (YYYY-MM-DD) or an ISO 8601 timestamp in years 0001-9999';

/** A calendar date that exists (no 2024-02-30, no month 99) in years 1-9999, as its UTC midnight. */
function calendarDate(v: string): Date | undefined {
  const m = DATE.exec(v);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < 1) return undefined;
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  t.setUTCHours(0, 0, 0, 0);
  return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d ? t : undefined;
}

/** An ISO 8601 date-time whose date exists and whose instant falls in years 1-9999 (UTC). */
function isoInstant(v: string): Date | undefined {
  const m = DATE_TIME.exec(v);
  if (!m || !calendarDate(m[1])) return undefined;
  const t = Date.parse(v.replace(' ', 'T'));
  return Number.isNaN(t) || t < MIN_TIME || t > MAX_TIME ? undefined : new Date(t);
}

/** Parsed date or date-time: `day` says whether it was a whole day (YYYY-MM-DD). */
export function parseDateOrTime(v: string): { at: Date; day: boolean } | undefined {
  const d = calendarDate(v);
  if (d) return { at: d, day: true };
  const t = isoInstant(v);
  return t ? { at: t, day: false } : undefined;
}

/**
 * A query's [from, to) for a service. A date (YYYY-MM-DD) covers its whole UTC day, so `dateTo=2024-05-31`
 * includes the 31st; a timestamp is taken as given (inclusive). The exclusive end of 9999-12-31 would be in
 * year 10000, which PostgreSQL cannot read back from an ISO string, so ends stop at the last millisecond of 9999.
 */
export function dateRange(from: string | undefined, to: string | undefined, fromField: string, toField: string) {
  const read = (v: string, field: string, end: boolean) => {
    const p = parseDateOrTime(v.trim());
    if (!p) throw badRequest([{ field, message: DATE_OR_TIME_MESSAGE }]);
    if (!end) return p.at;
    return new Date(Math.min(MAX_TIME, p.at.getTime() + (p.day ? DAY_MS : 1)));
  };
  const f = from ? read(from, fromField, false) : undefined;
  const t = to ? read(to, toField, true) : undefined;
  if (f && t && t <= f) throw badRequest([{ field: toField, message: `must not be before ${fromField}` }]);
  return { dateFrom: f?.toISOString(), dateTo: t?.toISOString() };
}

/** Common schema pieces. */
export const s = {
  text: (max = 200) => z.string().trim().max(max, `must be at most ${max} characters`),
  requiredText: (max = 200) => z.string({ error: 'is required' }).trim().min(1, 'is required').max(max, `must be at most ${max} characters`),
  email: () => z.string({ error: 'is required' }).trim().email('must be a valid email address'),
  httpUrl,
  enumOf: <T extends string>(values: readonly [T, ...T[]]) => z.enum(values, { error: `must be one of ${values.join(', ')}` }),
  optionalQueryEnum: <T extends string>(values: readonly [T, ...T[]]) => z.enum(values, { error: `must be one of ${values.join(', ')}` }).optional(),
  /** A calendar date (YYYY-MM-DD) that exists, in years 1-9999. */
  date: () => z.string({ error: 'is required' }).refine((v) => calendarDate(v) !== undefined, DATE_MESSAGE),
  /** An ISO 8601 timestamp (a real date, HH:MM[:SS[.fff]], optional zone; a bare date is its UTC midnight) in years 1-9999. */
  timestamp: () =>
    z
      .string({ error: 'is required' })
      .trim()
      .refine((v) => parseDateOrTime(v) !== undefined, 'must be an ISO 8601 timestamp in years 0001-9999'),
  /** A date or a timestamp, as list filters take them (see dateRange). */
  dateOrTimestamp: () =>
    z
      .string()
      .max(40, 'must be at most 40 characters')
      .refine((v) => parseDateOrTime(v.trim()) !== undefined, DATE_OR_TIME_MESSAGE),
};
