import { AppError } from '@crm/grpc-kit';
import { type CustomFields, type FieldDef, valueFromText } from '../custom-fields';
import type { crm } from '@crm/proto-types';
import { normalisePhone } from '../contacts';
import { oneOf, optionalEmail, optionalText, rules } from '../shared';

export interface ImportError {
  line: number;
  /** The CSV column: name, phone, email, tags, status or a custom field key. */
  field: string;
  message: string;
}

/** A row's values, validated: only its non-empty cells (an empty cell never erases what a contact has). */
export interface RowValues {
  line: number;
  name?: string;
  phone?: string;
  email?: string;
  tags?: string[];
  status?: string;
  customFields: CustomFields;
}

/** Each cell is checked on its own, so a row reports every bad cell at once. */
function cell<T>(errors: ImportError[], line: number, fn: () => T): T | undefined {
  try {
    return fn();
  } catch (err) {
    if (!(err instanceof AppError) || err.kind !== 'invalid_argument') throw err;
    const issue = err.details?.[0];
    errors.push({ line, field: issue?.field ?? 'row', message: issue?.message ?? err.message });
    return undefined;
  }
}

const present = (v: string | undefined) => (v ?? '').trim() !== '';

/** The row's values, or its errors (the row is then not imported), with the rules of POST /contacts. */
export function readRow(
  row: crm.ImportRow__Output,
  defs: Map<string, FieldDef>,
  phoneCountry: string,
): { values?: RowValues; errors: ImportError[] } {
  const errors: ImportError[] = [];
  const line = row.line;
  const v: RowValues = { line, customFields: {} };
  if (present(row.name)) v.name = cell(errors, line, () => optionalText(row.name, 'name', rules.CONTACT_TEXT_MAX.name));
  if (present(row.phone)) v.phone = cell(errors, line, () => normalisePhone(row.phone, phoneCountry));
  if (present(row.email)) v.email = cell(errors, line, () => optionalEmail(row.email));
  if (present(row.status)) v.status = cell(errors, line, () => oneOf(row.status!.trim().toLowerCase(), rules.CONTACT_STATUSES, 'status'));
  if (present(row.tags)) v.tags = cell(errors, line, () => rules.normaliseTags(row.tags!.split(';'), 'tags'));
  for (const [key, raw] of Object.entries(row.customFields ?? {})) {
    const text = raw.trim();
    if (!text) continue;
    const def = defs.get(key);
    if (!def) {
      errors.push({ line, field: key, message: 'is not a custom field of this organization' });
      continue;
    }
    const value = cell(errors, line, () => valueFromText(def, text, key));
    if (value !== undefined) v.customFields[key] = value;
  }
  if (errors.length === 0 && !v.name && !v.phone && !v.email)
    errors.push({ line, field: 'name', message: 'is required when there is no phone or email' });
  return errors.length > 0 ? { errors } : { values: v, errors };
}
