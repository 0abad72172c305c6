import { invalid } from '@crm/grpc-kit';

export const FIELD_TYPES = ['text', 'number', 'date', 'boolean', 'select'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export const FIELD_KEY_PATTERN = /^[a-z][a-z0-9_]{0,39}$/;
export const FIELD_KEY_MESSAGE = 'must be 1-40 characters: a lowercase letter, then lowercase letters, digits or _';
export const FIELD_LABEL_MAX = 100;
/** Enough for any real form; keeps every contact write's definition lookup small. */
export const MAX_FIELDS = 100;
export const MAX_OPTIONS = 100;
export const OPTION_MAX = 100;
export const TOO_MANY_OPTIONS = `must list at most ${MAX_OPTIONS} options`;
export const EMPTY_OPTION = 'must not contain empty options';
export const OPTION_TOO_LONG = `each option must be at most ${OPTION_MAX} characters`;

export function fieldKey(value: string | undefined): string {
  const k = (value ?? '').trim();
  if (!FIELD_KEY_PATTERN.test(k)) throw invalid('key', FIELD_KEY_MESSAGE);
  return k;
}

/** Options of a select field: 1-100 distinct (case-insensitively) non-empty texts; other types take none. */
export function fieldOptions(type: FieldType, values: readonly string[] | undefined): string[] {
  const list = (values ?? []).map((v) => String(v).trim());
  if (type !== 'select') {
    if (list.length > 0) throw invalid('options', 'are only for select fields');
    return [];
  }
  if (list.length === 0) throw invalid('options', 'must list at least one option for a select field');
  if (list.length > MAX_OPTIONS) throw invalid('options', TOO_MANY_OPTIONS);
  const seen = new Set<string>();
  for (const o of list) {
    if (!o) throw invalid('options', EMPTY_OPTION);
    if (o.length > OPTION_MAX) throw invalid('options', OPTION_TOO_LONG);
    if (seen.has(o.toLowerCase())) throw invalid('options', `lists "${o}" twice`);
    seen.add(o.toLowerCase());
  }
  return list;
}
