import { iso, Queryable } from '@crm/db';
import { latestOfContact } from './latest-of-contact';

export interface NoteRow {
  id: string;
  contact_id: string;
  content: string;
  created_by: string | null;
  created_at: Date;
}

export function toNote(r: NoteRow) {
  return { id: r.id, contactId: r.contact_id, content: r.content, createdBy: r.created_by ?? '', createdAt: iso(r.created_at) };
}

export async function insertNote(
  db: Queryable,
  n: { id: string; orgId: string; contactId: string; content: string; createdBy: string | null },
): Promise<NoteRow> {
  const { rows } = await db.query<NoteRow>({
    name: 'crm_note_insert',
    text: `INSERT INTO contact_notes (id, org_id, contact_id, content, created_by) VALUES ($1, $2, $3, $4, $5)
           RETURNING id, contact_id, content, created_by, created_at`,
    values: [n.id, n.orgId, n.contactId, n.content, n.createdBy],
  });
  return rows[0];
}

/** Newest first; `id` breaks ties between notes written in the same millisecond. */
const latestNotes = latestOfContact<NoteRow>({
  name: 'crm_notes_of_contact',
  columns: 'id, contact_id, content, created_by, created_at',
  table: 'contact_notes',
  order: 'created_at DESC, id DESC',
});

/** The contact's latest notes (a batch of contact details reads them in one query: latest-of-contact.ts). */
export function notesOf(db: Queryable, orgId: string, contactId: string, limit: number): Promise<NoteRow[]> {
  return latestNotes(db, orgId, contactId, limit);
}

/** The org's note of this contact, locked when `forUpdate` (an edit or delete decides on its author). */
export async function findNote(db: Queryable, orgId: string, contactId: string, id: string, forUpdate = false): Promise<NoteRow | undefined> {
  const { rows } = await db.query<NoteRow>({
    name: `crm_note_by_id${forUpdate ? '_lock' : ''}`,
    text: `SELECT id, contact_id, content, created_by, created_at FROM contact_notes
           WHERE id = $1 AND org_id = $2 AND contact_id = $3${forUpdate ? ' FOR UPDATE' : ''}`,
    values: [id, orgId, contactId],
  });
  return rows[0];
}

export async function updateNoteContent(db: Queryable, orgId: string, id: string, content: string): Promise<NoteRow> {
  const { rows } = await db.query<NoteRow>({
    name: 'crm_note_update',
    text: `UPDATE contact_notes SET content = $3 WHERE id = $1 AND org_id = $2 RETURNING id, contact_id, content, created_by, created_at`,
    values: [id, orgId, content],
  });
  return rows[0];
}

export async function deleteNote(db: Queryable, orgId: string, id: string): Promise<void> {
  await db.query({ name: 'crm_note_delete', text: 'DELETE FROM contact_notes WHERE id = $1 AND org_id = $2', values: [id, orgId] });
}
