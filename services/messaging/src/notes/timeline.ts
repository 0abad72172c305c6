import type { Queryable } from '@crm/db';
import { sentAtOffset } from '../conversations';
import * as notes from './notes.repo';

/** At most this many notes join one page of the timeline (the notes list pages through all of them). */
const TIMELINE_NOTES = 200;

/**
 * The notes belonging beside one page of messages (newest first). Page n covers the time from its oldest message
 * up to (not including) the oldest message of page n-1, so consecutive pages share no note and miss none: page 1
 * is open towards now, the last page towards the past, and a conversation without messages shows all its notes
 * on page 1.
 */
export async function notesBesidePage(
  db: Queryable,
  orgId: string,
  conversationId: string,
  p: { page: number; limit: number; total: number; oldestOnPage?: Date },
): Promise<notes.NoteRow[]> {
  const offset = (p.page - 1) * p.limit;
  if (!p.oldestOnPage && p.page > 1) return [];
  const lastPage = offset + p.limit >= p.total;
  const from = lastPage ? null : (p.oldestOnPage ?? null);
  const until = p.page > 1 ? ((await sentAtOffset(db, orgId, conversationId, offset - 1)) ?? null) : null;
  return notes.inRange(db, orgId, conversationId, from, until, TIMELINE_NOTES);
}

type Item<M> = { kind: 'message'; message: M; note: null } | { kind: 'note'; message: null; note: ReturnType<typeof notes.toNote> };

/** Messages (already newest first) and notes merged newest first; on equal times the message comes first. */
export function mergeTimeline<M extends { sentAt: string }>(messages: M[], noteRows: notes.NoteRow[]): Item<M>[] {
  const out: Item<M>[] = [];
  let i = 0;
  let j = 0;
  while (i < messages.length || j < noteRows.length) {
    const m = messages[i];
    const n = noteRows[j];
    if (m && (!n || Date.parse(m.sentAt) >= n.created_at.getTime())) {
      out.push({ kind: 'message', message: m, note: null });
      i++;
    } else {
      out.push({ kind: 'note', message: null, note: notes.toNote(n) });
      j++;
    }
  }
  return out;
}
