/**
 * A feed cursor: opaque to the integrator, base64url of `1:<position>:<time in ms>`. The position is the last event
 * the reader has (0: before the first); the time is when the reader was known to be up to date there, so a cursor
 * older than the retention is told apart from one that merely has nothing new (410 `cursor_expired` instead of a
 * silently skipped gap).
 */
export interface FeedCursor {
  position: bigint;
  at: Date;
}

const FORMAT = /^1:(0|[1-9]\d{0,18}):(\d{1,15})$/;
const MAX_POSITION = 2n ** 63n - 1n;

export function encodeCursor(c: FeedCursor): string {
  return Buffer.from(`1:${c.position}:${c.at.getTime()}`, 'utf8').toString('base64url');
}

/** The cursor a page was asked for; undefined when it is not one this service made. */
export function decodeCursor(raw: string): FeedCursor | undefined {
  if (raw.length > 64 || !/^[A-Za-z0-9_-]+$/.test(raw)) return undefined;
  const m = FORMAT.exec(Buffer.from(raw, 'base64url').toString('utf8'));
  if (!m) return undefined;
  const position = BigInt(m[1]);
  const at = new Date(Number(m[2]));
  if (position > MAX_POSITION || Number.isNaN(at.getTime())) return undefined;
  return { position, at };
}
