import { invalid } from '@crm/grpc-kit';
import { optionalText } from '../text';

export const STATUS_NAME_MAX = 100;

export const COLOR_PATTERN = /^#[0-9a-fA-F]{6}$/;
export const COLOR_MESSAGE = 'must be a hex color such as #22c55e';

/** "" (no color) or #rrggbb, stored lower-cased. */
export function statusColor(value: string | undefined): string {
  const c = optionalText(value, 'color', 7);
  if (c && !COLOR_PATTERN.test(c)) throw invalid('color', COLOR_MESSAGE);
  return c.toLowerCase();
}
