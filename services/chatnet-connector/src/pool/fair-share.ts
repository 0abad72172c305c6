/**
 * How many of `total` sessions an instance should hold: an even split over the live instances, the
 * remainder going one each to the first instances in id order. Every instance computes it from the same
 * registry, so the shares add up to the total and no two instances both think a session is theirs to take
 * (which would move it back and forth).
 */
export function fairShare(total: number, instances: readonly string[], self: string): number {
  const all = instances.includes(self) ? [...instances] : [...instances, self];
  all.sort();
  const base = Math.floor(total / all.length);
  return base + (all.indexOf(self) < total % all.length ? 1 : 0);
}
