import { invalid } from '@crm/grpc-kit';
import { normalisePhone } from './phone';
import { escapeLike, isUuid } from '../../shared';

/**
 * Customer-list criteria: `{filters: [{field, operator, value}]}`, all filters must hold (AND). Fields are a
 * whitelist of contact columns, operators those of the automation rules with the same meanings:
 * - equals / not_equals: case-insensitive (diacritics matter); on tags, "has a tag equal to"; not_equals is
 *   the negation (a contact without a value is "not equal").
 * - contains: substring; a value written without diacritics matches any accenting ("nguyen" finds "Nguyễn"),
 *   one with diacritics matches only those; on tags, "has a tag equal to" (as automation's contains on arrays).
 * - gte / lte: numbers (leadScore) and dates (createdAt, lastActivity; a date YYYY-MM-DD covers its whole UTC day).
 * - in: equals one of a non-empty array of values.
 * Compiled to parameterised SQL: only whitelisted column expressions and operators reach the SQL text,
 * every value travels as a parameter.
 */
export const OPERATORS = ['equals', 'not_equals', 'contains', 'gte', 'lte', 'in'] as const;
export type Operator = (typeof OPERATORS)[number];
type Scalar = string | number | boolean;

type Kind = 'text' | 'phone' | 'uuid' | 'tags' | 'number' | 'boolean' | 'time';

const FIELDS: Record<string, { column: string; kind: Kind }> = {
  name: { column: 'c.name', kind: 'text' },
  email: { column: 'c.email', kind: 'text' },
  phone: { column: 'c.phone', kind: 'phone' },
  source: { column: 'c.source', kind: 'text' },
  status: { column: 'c.status', kind: 'text' },
  statusId: { column: 'c.status_id', kind: 'uuid' },
  assignedUserId: { column: 'c.assigned_user_id', kind: 'uuid' },
  tags: { column: 'c.tags', kind: 'tags' },
  leadScore: { column: 'c.lead_score', kind: 'number' },
  dealValue: { column: 'c.deal_value', kind: 'number' },
  hasChatnet: { column: 'c.has_chatnet', kind: 'boolean' },
  createdAt: { column: 'c.created_at', kind: 'time' },
  lastActivity: { column: 'c.last_activity', kind: 'time' },
};
export const FIELD_NAMES = Object.keys(FIELDS);

const OPERATORS_OF: Record<Kind, readonly Operator[]> = {
  text: ['equals', 'not_equals', 'contains', 'in'],
  phone: ['equals', 'not_equals', 'contains', 'in'],
  uuid: ['equals', 'not_equals', 'in'],
  tags: ['equals', 'not_equals', 'contains', 'in'],
  number: ['equals', 'not_equals', 'gte', 'lte', 'in'],
  boolean: ['equals', 'not_equals', 'in'],
  time: ['gte', 'lte'],
};

export const LIMITS = { filters: 20, inValues: 100, valueLength: 200 };

export interface Filter {
  field: string;
  operator: Operator;
  value: Scalar | Scalar[];
}
export interface Criteria {
  filters: Filter[];
}

const isScalar = (v: unknown): v is Scalar => typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

function fold(text: string): string {
  return text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[đĐ]/g, 'd')
    .toLowerCase();
}
const lower = (t: string) => t.normalize('NFC').toLowerCase();
const hasDiacritics = (t: string) => fold(t) !== lower(t);

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** One value of a filter, checked against the field's kind; `path` names it in a 400. */
function checkValue(path: string, kind: Kind, op: Operator, v: unknown, phoneCountry: string): Scalar {
  if (!isScalar(v)) throw invalid(path, 'must be a string, number or boolean');
  if (typeof v === 'string' && v.length > LIMITS.valueLength) throw invalid(path, `must be at most ${LIMITS.valueLength} characters`);
  switch (kind) {
    case 'number': {
      const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
      if (!Number.isFinite(n)) throw invalid(path, 'must be a number');
      return n;
    }
    case 'boolean':
      if (v === true || v === 'true') return true;
      if (v === false || v === 'false') return false;
      throw invalid(path, 'must be true or false');
    case 'uuid':
      if (typeof v !== 'string' || !isUuid(v)) throw invalid(path, 'must be an id (UUID)');
      return v.toLowerCase();
    case 'time': {
      if (typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}/.test(v) || Number.isNaN(Date.parse(DATE.test(v) ? `${v}T00:00:00.000Z` : v))) {
        throw invalid(path, 'must be a date (YYYY-MM-DD) or an ISO 8601 timestamp');
      }
      return v;
    }
    default: {
      const s = String(v).trim();
      if (s === '' && op === 'contains') throw invalid(path, 'must be a non-empty string for operator contains');
      if (kind === 'phone' && op !== 'contains' && s !== '') {
        try {
          return normalisePhone(s, phoneCountry, path);
        } catch {
          return s;
        }
      }
      return s;
    }
  }
}

/**
 * Validate raw criteria (as sent by the client); 400s name `criteria.filters[i].field|operator|value`.
 * `under` is where the criteria object sits in the request ('' when its `filters` are top-level, as in reports).
 */
export function validateCriteria(raw: unknown, phoneCountry: string, under = 'criteria'): Criteria {
  const at = (p: string) => (under ? `${under}.${p}` : p);
  if (raw === undefined || raw === null) return { filters: [] };
  if (typeof raw !== 'object' || Array.isArray(raw)) throw invalid(under || 'filters', 'must be an object {filters: [...]}');
  const filtersRaw = (raw as { filters?: unknown }).filters;
  if (filtersRaw === undefined || filtersRaw === null) return { filters: [] };
  if (!Array.isArray(filtersRaw)) throw invalid(at('filters'), 'must be an array of {field, operator, value}');
  if (filtersRaw.length > LIMITS.filters) throw invalid(at('filters'), `must have at most ${LIMITS.filters} filters`);
  const filters = filtersRaw.map((f, i): Filter => {
    const path = at(`filters[${i}]`);
    if (!f || typeof f !== 'object' || Array.isArray(f)) throw invalid(path, 'must be an object {field, operator, value}');
    const { field, operator, value } = f as { field?: unknown; operator?: unknown; value?: unknown };
    if (typeof field !== 'string' || !field.trim()) throw invalid(`${path}.field`, 'is required');
    const spec = Object.prototype.hasOwnProperty.call(FIELDS, field.trim()) ? FIELDS[field.trim()] : undefined;
    if (!spec) throw invalid(`${path}.field`, `must be one of ${FIELD_NAMES.join(', ')}`);
    if (typeof operator !== 'string' || !operator.trim()) throw invalid(`${path}.operator`, 'is required');
    const op = operator.trim();
    if (!(OPERATORS as readonly string[]).includes(op)) throw invalid(`${path}.operator`, `must be one of ${OPERATORS.join(', ')}`);
    const allowed = OPERATORS_OF[spec.kind];
    if (!allowed.includes(op as Operator)) throw invalid(`${path}.operator`, `cannot be used on ${field.trim()} (use one of ${allowed.join(', ')})`);
    if (value === undefined) throw invalid(`${path}.value`, 'is required');
    if (op === 'in') {
      if (!Array.isArray(value) || value.length === 0) throw invalid(`${path}.value`, 'must be a non-empty array for operator in');
      if (value.length > LIMITS.inValues) throw invalid(`${path}.value`, `must have at most ${LIMITS.inValues} values`);
      return { field: field.trim(), operator: 'in', value: value.map((v, j) => checkValue(`${path}.value[${j}]`, spec.kind, 'in', v, phoneCountry)) };
    }
    if (Array.isArray(value)) throw invalid(`${path}.value`, `must be a single value for operator ${op} (arrays only with in)`);
    return { field: field.trim(), operator: op as Operator, value: checkValue(`${path}.value`, spec.kind, op as Operator, value, phoneCountry) };
  });
  return { filters };
}

/** Time bounds: a date covers its whole UTC day (gte from its start, lte through its end). */
function timeBound(v: string, op: 'gte' | 'lte'): string {
  if (!DATE.test(v)) return new Date(v).toISOString();
  const d = new Date(`${v}T00:00:00.000Z`);
  if (op === 'lte') d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString();
}

/**
 * The WHERE fragment (without org) for criteria, adding values to `params`. Alias `c` is the contacts table.
 * Returns 'true' for no filters.
 */
export function criteriaSql(criteria: Criteria, params: unknown[]): string {
  const p = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const parts = criteria.filters.map((f) => {
    const { column, kind } = FIELDS[f.field];
    const eqText = (v: Scalar) => `lower(${column}) = ${p(lower(String(v)))}`;
    const eq = (v: Scalar): string => {
      switch (kind) {
        case 'tags':
          return `EXISTS (SELECT 1 FROM unnest(${column}) AS t(tag) WHERE lower(btrim(t.tag)) = ${p(lower(String(v)))})`;
        case 'number':
          return `${column} = ${p(v)}::numeric`;
        case 'boolean':
          return `${column} = ${p(v)}::boolean`;
        case 'uuid':
          return `${column} = ${p(v)}::uuid`;
        default:
          return eqText(v);
      }
    };
    switch (f.operator) {
      case 'equals':
        return eq(f.value as Scalar);
      case 'not_equals':
        return `NOT COALESCE(${eq(f.value as Scalar)}, false)`;
      case 'in':
        return `(${(f.value as Scalar[]).map(eq).join(' OR ')})`;
      case 'contains': {
        const v = String(f.value);
        if (kind === 'tags') return eq(v);
        if (kind === 'phone') {
          const digits = v.replace(/\D/g, '');
          return `${column} LIKE ${p(`%${escapeLike(digits || v)}%`)}`;
        }
        if (hasDiacritics(v)) return `lower(${column}) LIKE ${p(`%${escapeLike(lower(v))}%`)}`;
        return `crm_fold(${column}) LIKE ${p(`%${escapeLike(fold(v))}%`)}`;
      }
      case 'gte':
      case 'lte': {
        const cmp = f.operator === 'gte' ? '>=' : kind === 'time' ? '<' : '<=';
        if (kind === 'time') {
          const bound = timeBound(String(f.value), f.operator);
          // lte on a timestamp is inclusive: [.., t] becomes < t + 1 ms; on a date, < the next day.
          const end = DATE.test(String(f.value)) || f.operator === 'gte' ? bound : new Date(Date.parse(bound) + 1).toISOString();
          return `${column} ${cmp} ${p(end)}::timestamptz`;
        }
        return `${column} ${cmp} ${p(f.value)}::numeric`;
      }
    }
  });
  return parts.length ? parts.join(' AND ') : 'true';
}
