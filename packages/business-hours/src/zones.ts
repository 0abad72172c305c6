/**
 * Time-zone arithmetic on Intl alone (Node ships full ICU data): the wall-clock reading of an instant in an IANA zone,
 * and back. Shared by the business-hours arithmetic here and automation's cron schedules.
 */

/** Whether the runtime knows the zone. Kept as written: ICU would rename Asia/Ho_Chi_Minh to its old alias Asia/Saigon. */
export function knownZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const formats = new Map<string, Intl.DateTimeFormat>();
/** One formatter per zone: building one costs far more than using it. */
function formatIn(zone: string): Intl.DateTimeFormat {
  let f = formats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formats.set(zone, f);
  }
  return f;
}

/**
 * The wall-clock reading of `ms` in `zone` to the second, as if that reading were UTC (so calendar arithmetic is plain
 * UTC arithmetic).
 */
export function wallClock(ms: number, zone: string): number {
  const p: Record<string, number> = {};
  for (const { type, value } of formatIn(zone).formatToParts(new Date(ms))) if (type !== 'literal') p[type] = Number(value);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
}

/** The zone's offset from UTC at the instant `ms`, in ms (wall clock = utc + offset). */
export function offsetAt(ms: number, zone: string): number {
  return wallClock(ms, zone) - Math.floor(ms / 1000) * 1000;
}

const DAY_MS = 86_400_000;

/**
 * The instant a wall-clock reading (given as if UTC) happens in `zone`. A reading skipped by a DST change is taken as
 * read on the clock before the change, so it lands the length of the jump after the skipped time, in every zone
 * (Berlin's 02:30 → 03:30 CEST, New York's 02:30 → 03:30 EDT): hours that open in the gap open when it ends.
 * `instantsOf` tells such readings apart.
 */
export function instantOf(wall: number, zone: string): number {
  let at = wall - (wallClock(wall, zone) - wall);
  // A second pass settles readings near an offset change.
  at = wall - (wallClock(at, zone) - at);
  // Skipped: the passes land before the jump west of UTC (New York's 02:30 → 01:30 EST), after it east of it.
  if (wallClock(at, zone) !== Math.floor(wall / 1000) * 1000) at = wall - offsetAt(wall - DAY_MS, zone);
  return at;
}

/**
 * Every instant at which `zone`'s clock reads `wall` (given as if UTC), in order: one normally, two in an hour repeated
 * when the clocks go back, none in one skipped when they go forward.
 */
export function instantsOf(wall: number, zone: string): number[] {
  const offsets = new Set([offsetAt(wall - DAY_MS, zone), offsetAt(wall, zone), offsetAt(wall + DAY_MS, zone)]);
  const out: number[] = [];
  for (const o of offsets) if (offsetAt(wall - o, zone) === o) out.push(wall - o);
  return out.sort((a, b) => a - b);
}
