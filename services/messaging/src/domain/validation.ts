import { invalid } from '@crm/grpc-kit';

// The checks every service shares (ids, text, choices) live in @crm/validation; messaging's own rules stay here.

const HEX = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
export function hexColor(value: string | undefined, field = 'color'): string {
  const v = (value ?? '').trim();
  if (!HEX.test(v)) throw invalid(field, 'must be a hex color such as #3B82F6');
  return v.toUpperCase();
}

/** Longest message body accepted (the chat network's own limit is in the same range). */
export const MAX_CONTENT = 20_000;
