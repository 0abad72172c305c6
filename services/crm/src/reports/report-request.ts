import { invalid } from '@crm/grpc-kit';
import { Filter, validateCriteria } from '../contacts';
import { requireText } from '../shared';

/**
 * What a custom report may ask for. Every name is a whitelist entry; the SQL for each lives in
 * report-query.ts, so nothing a client sends reaches the SQL text.
 *
 * Contact metrics count the contacts created in the range (a cohort), as they are now:
 * - lead_count: contacts created; customer_count: those whose status is customer;
 * - conversion_rate: customer_count / lead_count in percent (2 decimals; empty without contacts);
 * - revenue: sum of dealValue over those customers; average_deal_value: revenue / customer_count (empty
 *   without customers).
 * Message metrics count the messages of the range (by message time) with contacts matching the filters:
 * - messages_received, messages_sent (the contacts' activity timeline, fed by messaging's events).
 */
export const METRICS = [
  'lead_count',
  'customer_count',
  'conversion_rate',
  'revenue',
  'average_deal_value',
  'messages_received',
  'messages_sent',
] as const;
export type Metric = (typeof METRICS)[number];
export const MESSAGE_METRICS: readonly Metric[] = ['messages_received', 'messages_sent'];

/** Contact fields as they are now, plus one time bucket (UTC) of the creation or message time. */
export const DIMENSIONS = ['source', 'status', 'assignedUser', 'day', 'week', 'month'] as const;
export type Dimension = (typeof DIMENSIONS)[number];
export const TIME_DIMENSIONS: readonly Dimension[] = ['day', 'week', 'month'];

/** A range longer than this is a 400: reports are for periods, the row cap for the rest. */
export const MAX_RANGE_DAYS = 731;
const NAME_MAX = 200;

export interface ReportSpec {
  metrics: Metric[];
  dimensions: Dimension[];
  /** As sent (a date or a timestamp). */
  dateFrom: string;
  dateTo: string;
  /** The range as used: from inclusive, to exclusive (ISO timestamps). */
  from: string;
  to: string;
  filters: Filter[];
}

function names<T extends string>(raw: string[] | undefined, allowed: readonly T[], field: string, max: number): T[] {
  const list = raw ?? [];
  if (list.length > max) throw invalid(field, `must have at most ${max} entries`);
  const out: T[] = [];
  list.forEach((v, i) => {
    const name = typeof v === 'string' ? v.trim() : '';
    if (!(allowed as readonly string[]).includes(name)) throw invalid(`${field}[${i}]`, `must be one of ${allowed.join(', ')}`);
    if (out.includes(name as T)) throw invalid(`${field}[${i}]`, `${name} is listed twice`);
    out.push(name as T);
  });
  return out;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

/** A date covers its whole UTC day; a timestamp is exact. Returns [start, end) of the value. */
function bounds(value: string | undefined, field: string): [Date, Date] {
  const v = (value ?? '').trim();
  if (!v) throw invalid(field, 'is required');
  if (DATE.test(v)) {
    const start = new Date(`${v}T00:00:00.000Z`);
    // "2024-02-30" parses as March 1st: refuse dates that do not exist.
    if (Number.isNaN(start.getTime()) || start.toISOString().slice(0, 10) !== v) throw invalid(field, 'is not a valid date');
    return [start, new Date(start.getTime() + 86_400_000)];
  }
  const t = new Date(v);
  if (!TIMESTAMP.test(v) || Number.isNaN(t.getTime())) throw invalid(field, 'must be a date (YYYY-MM-DD) or an ISO 8601 timestamp with a zone');
  return [t, new Date(t.getTime() + 1)];
}

export interface CreateReportRequest {
  name?: string;
  metrics?: string[];
  dimensions?: string[];
  dateFrom?: string;
  dateTo?: string;
  filtersJson?: string;
}

/** The validated report request; a 400 names the field (`metrics[1]`, `filters[0].operator`, `dateTo`...). */
export function validateReportRequest(req: CreateReportRequest, phoneCountry: string): { name: string; spec: ReportSpec } {
  const name = requireText(req.name, 'name', NAME_MAX);
  const metrics = names(req.metrics, METRICS, 'metrics', METRICS.length);
  if (metrics.length === 0) throw invalid('metrics', `must list at least one of ${METRICS.join(', ')}`);
  const dimensions = names(req.dimensions, DIMENSIONS, 'dimensions', DIMENSIONS.length);
  const times = dimensions.filter((d) => TIME_DIMENSIONS.includes(d));
  if (times.length > 1) throw invalid(`dimensions[${dimensions.indexOf(times[1])}]`, `only one of ${TIME_DIMENSIONS.join(', ')} may be used`);

  const [from] = bounds(req.dateFrom, 'dateFrom');
  const [toStart, to] = bounds(req.dateTo, 'dateTo');
  if (toStart < from) throw invalid('dateTo', 'must not be before dateFrom');
  if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * 86_400_000) throw invalid('dateTo', `must be at most ${MAX_RANGE_DAYS} days after dateFrom`);

  let rawFilters: unknown = [];
  if (req.filtersJson) {
    try {
      rawFilters = JSON.parse(req.filtersJson);
    } catch {
      throw invalid('filters', 'is not valid JSON');
    }
  }
  const { filters } = validateCriteria({ filters: rawFilters }, phoneCountry, '');
  return {
    name,
    spec: {
      metrics,
      dimensions,
      dateFrom: req.dateFrom!.trim(),
      dateTo: req.dateTo!.trim(),
      from: from.toISOString(),
      to: to.toISOString(),
      filters,
    },
  };
}
