const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `200ms`, `5s`, `30m`, `2h`, `5d` → milliseconds; a bare number is milliseconds. */
export function parseDuration(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!m) throw new Error(`"${text}" is not a duration (use e.g. 500ms, 5s, 30m, 2h, 5d)`);
  const ms = Math.round(Number(m[1]) * UNIT_MS[m[2] ?? 'ms']);
  if (!Number.isFinite(ms)) throw new Error(`"${text}" is not a duration`);
  return ms;
}

/** `5s,5m,30m` → [5000, 300000, 1800000]: the wait before retry 1, 2, 3... */
export function parseSchedule(text: string): number[] {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  if (parts.length === 0) throw new Error('must list at least one duration');
  return parts.map((p) => {
    const ms = parseDuration(p);
    if (ms <= 0) throw new Error(`"${p}": each wait must be positive`);
    return ms;
  });
}
