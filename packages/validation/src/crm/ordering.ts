import { invalid } from '@crm/grpc-kit';
import { integerRange } from './messages';

/** Where a custom status or custom field sorts among its org's (0 first). */
export const MAX_POSITION = 10_000;
export const POSITION_MESSAGE = integerRange(0, MAX_POSITION);

export function position(value: number | undefined): number {
  if (value === undefined) return 0;
  if (!Number.isInteger(value) || value < 0 || value > MAX_POSITION) throw invalid('position', POSITION_MESSAGE);
  return value;
}
