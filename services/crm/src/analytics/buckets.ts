/**
 * Histogram buckets of durations (milliseconds). Bucket 0 holds everything under one second; bucket b ≥ 1
 * holds [BOUNDS[b-1], BOUNDS[b]), each bound GROWTH times the one before, up to a year; the last bucket is
 * open-ended. Bounds are integers computed once, so the bucket of a value is a binary search here and
 * `width_bucket(ms, bounds)` in SQL (bench seeding) with exactly the same answer.
 *
 * The buckets only decide how much work a percentile takes, not its precision: a query finds the bucket
 * holding the k-th value from the daily histogram, then reads that one bucket's values to get it exactly.
 * GROWTH trades the histogram's size (rows per day) against the values read from one bucket; 1.1 keeps
 * both small (see services/crm/README.md, Analytics).
 */
export const GROWTH = 1.1;
const FIRST_BOUND_MS = 1000;
const LAST_BOUND_MS = 366 * 24 * 3600 * 1000;

export const BOUNDS: readonly number[] = (() => {
  const out: number[] = [];
  for (let b = FIRST_BOUND_MS; b <= LAST_BOUND_MS; b = Math.max(b + 1, Math.round(b * GROWTH))) out.push(b);
  return out;
})();

/** Number of bounds ≤ ms (SQL width_bucket semantics). */
export function bucketOf(ms: number): number {
  let lo = 0;
  let hi = BOUNDS.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (BOUNDS[mid] <= ms) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
