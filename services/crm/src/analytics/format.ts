/** How analytics numbers are shown: durations in seconds to the millisecond, percentages to 2 decimals. */

export const seconds = (ms: number) => Math.round(ms) / 1000;

/** part / whole × 100, or undefined (shown as null) when there is no whole: a rate of nothing is unknown. */
export function percent(part: number, whole: number): number | undefined {
  return whole > 0 ? Math.round((part / whole) * 10_000) / 100 : undefined;
}

/** Money sums: numeric(14,2) values added as numbers, rounded back to cents. */
export const cents = (v: number) => Math.round(v * 100) / 100;
