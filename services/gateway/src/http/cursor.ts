import type { Request } from 'express';
import { z } from 'zod';
import { badRequest } from './errors';
import { pageParams, parseDateOrTime } from './validate';

/**
 * Cursors of the public lists (issue #15). A cursor is opaque to the integrator: base64url of
 * `{k, v, id, s?}` — the order key (which list and order it belongs to), the last row's sort value and id,
 * and the `updatedSince` it was made with. It names a position only: every query still filters on the org of
 * the API key, so a cursor made for one org and used by another finds that other org's rows after the
 * position, never the first org's. The services check the position again before it reaches SQL.
 *
 * Without `cursor` and `updatedSince` a list keeps its usual order and `nextCursor` continues it. With
 * `updatedSince` it walks (updatedAt, id) ascending: "everything changed since T, page by page". A record
 * changed while an integrator pages moves behind the cursor and comes again on a later page: that is the
 * incremental sync seeing the new change.
 */

/** One public list: its name and the keys of its two orders. */
export interface CursorList {
  list: string;
  /** The usual order's key; `nullable`: its column may be NULL (value '' in the cursor). */
  defaultKey: string;
  nullable?: boolean;
  /** The updatedAt order's key (messages: sentAt ascending). */
  updatedKey: string;
}

export const CURSOR_LISTS = {
  contacts: { list: 'contacts', defaultKey: 'lastActivity', updatedKey: 'updatedAt' },
  appointments: { list: 'appointments', defaultKey: 'scheduledAt', updatedKey: 'updatedAt' },
  conversations: { list: 'conversations', defaultKey: 'lastMessageAt', nullable: true, updatedKey: 'updatedAt' },
  messages: { list: 'messages', defaultKey: 'sentAtDesc', updatedKey: 'sentAt' },
} satisfies Record<string, CursorList>;

/** What the services take (common.v1.Keyset). */
export interface Keyset {
  order: 'default' | 'updated';
  after?: { value: string; id: string };
  updatedSince: string;
}

/** A position's value: an ISO UTC timestamp with up to microseconds (what the services hand out). */
const KEY_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;
/** Longer than any cursor this gateway makes; a longer one is not ours. */
const MAX_CURSOR = 400;

const CursorBody = z
  .object({
    k: z.string().max(60),
    v: z.string().max(40),
    id: z.string().uuid(),
    s: z.string().max(40).optional(),
  })
  .strict();

const notOurs = (message = 'is not a valid cursor; pass nextCursor exactly as a previous page returned it') =>
  badRequest([{ field: 'cursor', message }]);

function decode(raw: string, list: CursorList): { order: 'default' | 'updated'; after: { value: string; id: string }; s?: string } {
  if (raw.length > MAX_CURSOR || !/^[A-Za-z0-9_-]+$/.test(raw)) throw notOurs();
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw notOurs();
  }
  const parsed = CursorBody.safeParse(json);
  if (!parsed.success) throw notOurs();
  const { k, v, id, s } = parsed.data;
  const order = k === `${list.list}.${list.defaultKey}` ? 'default' : k === `${list.list}.${list.updatedKey}` ? 'updated' : undefined;
  if (!order) throw notOurs(`belongs to another list; a cursor only continues the list (${list.list}) that returned it`);
  const nullOk = order === 'default' && list.nullable;
  if (!(v === '' ? nullOk : KEY_TIME.test(v) && parseDateOrTime(v) !== undefined)) throw notOurs();
  if (s !== undefined && (order !== 'updated' || !parseDateOrTime(s))) throw notOurs();
  return { order, after: { value: v, id: id.toLowerCase() }, s };
}

/** `updatedSince` as its UTC instant (ISO, milliseconds), or a 400 naming it. */
function readUpdatedSince(req: Request): string | undefined {
  const raw = req.query.updatedSince;
  if (raw === undefined || raw === '') return undefined;
  const parsed = typeof raw === 'string' && raw.length <= 40 ? parseDateOrTime(raw.trim()) : undefined;
  if (!parsed) throw badRequest([{ field: 'updatedSince', message: 'must be an ISO 8601 timestamp (or date) in years 0001-9999' }]);
  return parsed.at.toISOString();
}

/**
 * limit, cursor and updatedSince of a public list request. With a cursor, `updatedSince` may be left out
 * (the cursor carries it); given, it must be the one the cursor was made with.
 */
export function publicPage(req: Request, list: CursorList, defaultLimit: number, maxLimit: number): { limit: number; keyset: Keyset } {
  const { limit } = pageParams(req, defaultLimit, maxLimit);
  const since = readUpdatedSince(req);
  const raw = req.query.cursor;
  if (raw === undefined || raw === '') return { limit, keyset: { order: since ? 'updated' : 'default', updatedSince: since ?? '' } };
  if (typeof raw !== 'string') throw notOurs();
  const c = decode(raw, list);
  if (since !== undefined && since !== c.s)
    throw badRequest([{ field: 'updatedSince', message: 'differs from the one this cursor was made with; leave it out when passing a cursor' }]);
  return { limit, keyset: { order: c.order, after: c.after, updatedSince: c.s ?? '' } };
}

/** The cursor of the page after this one, or null on the last page (the service returned no position). */
export function nextCursor(list: CursorList, keyset: Keyset, next: { value: string; id: string } | null | undefined): string | null {
  if (!next || !next.id) return null;
  const k = `${list.list}.${keyset.order === 'updated' ? list.updatedKey : list.defaultKey}`;
  const body = { k, v: next.value, id: next.id, ...(keyset.updatedSince ? { s: keyset.updatedSince } : {}) };
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
}
