import { isUuid } from './uuid';

/**
 * Keyset pagination, as the public API's cursors use it: a page starts after the last row of the previous one,
 * named by its sort value and id, so rows inserted or deleted meanwhile neither repeat nor skip a row (OFFSET
 * would). The gateway wraps a position into its opaque cursor; services only see the position.
 */

/** Where a page starts: the previous page's last row. `value` is '' when that row's sort column was NULL. */
export interface KeysetPosition {
  value: string;
  id: string;
}

/**
 * A keyset request (common.v1.Keyset): `order` "updated" walks updatedAt ascending (incremental sync),
 * anything else the list's usual order; `updatedSince` keeps rows updated at or after it (ISO timestamp).
 */
export interface KeysetRequest {
  order?: string;
  after?: KeysetPosition | null;
  updatedSince?: string;
}

/**
 * A sort value in a position: an ISO UTC timestamp with up to microseconds. PostgreSQL keeps microseconds and a
 * JavaScript Date only milliseconds; a position rounded to milliseconds would repeat the rows of its millisecond.
 */
const KEY_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;

/** Whether a position is well formed (a timestamp, or '' where the column may be NULL, and a UUID). */
export function isKeysetPosition(p: KeysetPosition, nullable = false): boolean {
  if (!isUuid(p.id)) return false;
  if (p.value === '') return nullable;
  if (!KEY_TIME.test(p.value)) return false;
  const t = Date.parse(p.value);
  // The round trip refuses days a month does not have (JavaScript rolls 02-30 over; PostgreSQL would fail).
  return !Number.isNaN(t) && new Date(t).getUTCFullYear() >= 1 && new Date(t).toISOString().slice(0, 19) === p.value.slice(0, 19);
}

/** SQL giving a timestamptz column as a position value (microsecond ISO UTC text; NULL stays NULL). */
export const keyTimeSql = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * SQL for "the row comes after `pos`" in the order `column dir, idColumn dir`; `arg` adds a query parameter and
 * returns its placeholder. A nullable column sorts NULLs last in either direction (ASC's default, and the DESC
 * NULLS LAST the lists use), so after a NULL only NULLs follow.
 */
export function afterSql(
  column: string,
  idColumn: string,
  dir: 'ASC' | 'DESC',
  pos: KeysetPosition,
  arg: (v: unknown) => string,
  nullable = false,
): string {
  const cmp = dir === 'ASC' ? '>' : '<';
  const id = `${arg(pos.id)}::uuid`;
  if (pos.value === '') return `(${column} IS NULL AND ${idColumn} ${cmp} ${id})`;
  const past = `(${column}, ${idColumn}) ${cmp} (${arg(pos.value)}::timestamptz, ${id})`;
  return nullable ? `(${column} IS NULL OR ${past})` : past;
}

/**
 * The page and where the next one starts: `rows` were read with LIMIT limit + 1, so a row beyond the page
 * says there is a next page (none: `next` is undefined, the last page).
 */
export function keysetPage<R extends { id: string; key_value: string | null }>(rows: R[], limit: number): { rows: R[]; next?: KeysetPosition } {
  if (rows.length <= limit) return { rows };
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { rows: page, next: { value: last.key_value ?? '', id: last.id } };
}

/** A keyset request checked and decoded, as the repositories take it. */
export interface Keyset {
  order: 'default' | 'updated';
  after?: KeysetPosition;
  updatedSince?: Date;
}

/**
 * Check a keyset request. The gateway checks the cursor it decoded; services check again so that nothing
 * malformed reaches a SQL cast: `fail` makes the service's invalid-argument error naming the public field
 * (cursor, updatedSince). `nullable`: the list's usual order is on a column that may be NULL.
 */
export function readKeyset(k: KeysetRequest, fail: (field: string, message: string) => Error, nullable = false): Keyset {
  const order = k.order === 'updated' ? 'updated' : 'default';
  const after = k.after ?? undefined;
  if (after && !isKeysetPosition(after, nullable && order === 'default')) throw fail('cursor', 'is not a cursor of this list');
  let updatedSince: Date | undefined;
  if (k.updatedSince) {
    updatedSince = new Date(k.updatedSince);
    const year = updatedSince.getUTCFullYear();
    if (Number.isNaN(updatedSince.getTime()) || year < 1 || year > 9999)
      throw fail('updatedSince', 'must be an ISO 8601 timestamp in years 0001-9999');
  }
  return { order, after, updatedSince };
}
