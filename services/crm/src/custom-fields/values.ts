import { invalid } from '@crm/grpc-kit';
import { rules } from '../shared';

/**
 * Custom field values: what each type accepts, from JSON (the API) and from text (CSV cells, cf.<key> filters),
 * and how a value is written back as text. No I/O here: the definitions are passed in.
 */
export type FieldType = rules.FieldType;

export interface FieldDef {
  key: string;
  type: FieldType;
  options: string[];
}

/** Stored as JSON: numbers and booleans as such, text, select and date (YYYY-MM-DD) as strings. */
export type CustomValue = string | number | boolean;
export type CustomFields = Record<string, CustomValue>;

/** Keys set to a value and keys removed, as one request asked. */
export interface CustomFieldChanges {
  set: CustomFields;
  remove: string[];
}

export const TEXT_MAX = 1000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const NUMBER_TEXT = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const TRUE_TEXT = ['true', 'yes', '1'];
const FALSE_TEXT = ['false', 'no', '0'];

function calendarDate(v: string): boolean {
  const m = DATE.exec(v);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < 1) return false;
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d;
}

/** A select value matches an option case-insensitively and is stored with the option's own spelling. */
function option(def: FieldDef, v: string, field: string): string {
  const found = def.options.find((o) => o.toLowerCase() === v.toLowerCase());
  if (found === undefined) throw invalid(field, `must be one of ${def.options.join(', ')}`);
  return found;
}

function text(v: string, field: string): string {
  if (v.length > TEXT_MAX) throw invalid(field, `must be at most ${TEXT_MAX} characters`);
  return v;
}

/** A JSON value for the field's type (the API is typed: "12" is not a number). */
export function valueFromJson(def: FieldDef, value: unknown, field: string): CustomValue {
  switch (def.type) {
    case 'text':
      if (typeof value !== 'string') throw invalid(field, 'must be a string');
      return text(value.trim(), field);
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(field, 'must be a finite number');
      return value;
    case 'date':
      if (typeof value !== 'string' || !calendarDate(value)) throw invalid(field, 'must be a date (YYYY-MM-DD)');
      return value;
    case 'boolean':
      if (typeof value !== 'boolean') throw invalid(field, 'must be true or false');
      return value;
    case 'select':
      if (typeof value !== 'string') throw invalid(field, `must be one of ${def.options.join(', ')}`);
      return option(def, value.trim(), field);
  }
}

/** A value written as text (a CSV cell, a query parameter), read by the field's type; `v` is already trimmed. */
export function valueFromText(def: FieldDef, v: string, field: string): CustomValue {
  switch (def.type) {
    case 'text':
      return text(v, field);
    case 'number': {
      const n = Number(v);
      if (!NUMBER_TEXT.test(v) || !Number.isFinite(n)) throw invalid(field, 'must be a finite number');
      return n;
    }
    case 'date':
      if (!calendarDate(v)) throw invalid(field, 'must be a date (YYYY-MM-DD)');
      return v;
    case 'boolean': {
      const lower = v.toLowerCase();
      if (TRUE_TEXT.includes(lower)) return true;
      if (FALSE_TEXT.includes(lower)) return false;
      throw invalid(field, 'must be true or false');
    }
    case 'select':
      return option(def, v, field);
  }
}

/** The value as a CSV cell: what valueFromText reads back to the same value. */
export function valueToText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : String(value);
}

/**
 * The API's `customFields` object: each key must be one of the org's fields (400 naming customFields.<key>), each
 * value valid for its type; null or "" removes the key.
 */
export function changesFromJson(raw: unknown, defs: Map<string, FieldDef>): CustomFieldChanges {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw invalid('customFields', 'must be an object of {key: value}');
  const out: CustomFieldChanges = { set: {}, remove: [] };
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    const field = `customFields.${key}`;
    const def = defs.get(key);
    if (!def) throw invalid(field, 'is not a custom field of this organization');
    if (value === null || value === '') out.remove.push(key);
    else out.set[key] = valueFromJson(def, value, field);
  }
  return out;
}

/** JSON text from gRPC (customFieldsJson) to changes; unparsable text is a 400 too. */
export function changesFromJsonText(json: string, defs: Map<string, FieldDef>): CustomFieldChanges {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw invalid('customFields', 'must be an object of {key: value}');
  }
  return changesFromJson(raw, defs);
}

/**
 * The contact's values after the changes, keys in jsonb's own order (shorter first, then bytewise), so a value
 * read back from PostgreSQL compares equal to one computed here (diffs compare JSON text).
 */
export function applyChanges(current: CustomFields, changes: CustomFieldChanges): CustomFields {
  const next: CustomFields = { ...current, ...changes.set };
  for (const key of changes.remove) delete next[key];
  return canonical(next);
}

export function canonical(values: CustomFields): CustomFields {
  const keys = Object.keys(values).sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
  const out: CustomFields = {};
  for (const k of keys) out[k] = values[k];
  return out;
}

/** cf.<key>=value filters: one object for a containment test, each value typed (400 naming cf.<key>). */
export function filterFromText(filters: Record<string, string>, defs: Map<string, FieldDef>): CustomFields | undefined {
  const entries = Object.entries(filters ?? {});
  if (entries.length === 0) return undefined;
  const out: CustomFields = {};
  for (const [key, raw] of entries) {
    const field = `cf.${key}`;
    const def = defs.get(key);
    if (!def) throw invalid(field, 'is not a custom field of this organization');
    const v = String(raw).trim();
    if (!v) throw invalid(field, 'must not be empty');
    out[key] = valueFromText(def, v, field);
  }
  return out;
}
