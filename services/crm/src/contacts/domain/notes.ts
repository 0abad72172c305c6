import { randomUUID } from 'node:crypto';
import { AppError, notFound, requireCan, roleRank, OrgContext } from '@crm/grpc-kit';
import { PoolClient, withTransaction } from '@crm/db';
import { enqueueEvent } from '@crm/events';
import type { crm } from '@crm/proto-types';
import type { ContactsDeps } from '../deps';
import { recordActivity } from '../db/activities.repo';
import { findContact } from '../db/contacts.repo';
import * as repo from '../db/notes.repo';
import { isUuid, requireText, rules } from '../../shared';
import { viewerOf } from './visibility';

/**
 * Notes on a contact. Anyone who may write contacts adds one; only its author, or a team lead and above, edits or
 * deletes it. A contact hidden from an agent by inbox visibility is 404 like another org's, and so are its notes.
 * Each change records an activity and a `contact.note_*` event in its transaction.
 */

/** The org's contact the caller may see, or 404. */
async function visibleContact(deps: ContactsDeps, ctx: OrgContext, orgId: string, contactId: string) {
  const contact = isUuid(contactId) ? await findContact(deps.pool, orgId, contactId, false, viewerOf(ctx)) : undefined;
  if (!contact) throw notFound('Contact');
  return contact;
}

/** The note of that contact, locked for the change; 404 for an unknown id or a note of another contact. */
async function lockNote(tx: PoolClient, orgId: string, contactId: string, noteId: string) {
  const note = isUuid(noteId) ? await repo.findNote(tx, orgId, contactId, noteId, true) : undefined;
  if (!note) throw notFound('Note');
  return note;
}

function requireAuthorOrLead(ctx: OrgContext, note: repo.NoteRow, verb: 'edit' | 'delete') {
  if (roleRank(ctx.role) >= roleRank('team_lead')) return;
  if (note.created_by && note.created_by === ctx.userId) return;
  throw new AppError('permission_denied', `Only the note's author, team leads, admins and owners can ${verb} it`, { code: 'forbidden' });
}

/** The note's `contact.note_*` event, in the trace of the call `ctx` that changed it, by its user. */
function noteEvent(
  tx: PoolClient,
  type: 'contact.note_created' | 'contact.note_updated' | 'contact.note_deleted',
  ctx: OrgContext,
  note: repo.NoteRow,
) {
  const by = ctx.userId;
  return enqueueEvent(tx, {
    type,
    orgId: ctx.orgId,
    data: { contactId: note.contact_id, note: repo.toNote(note), by: isUuid(by) ? by : null },
    traceparent: ctx.traceparent,
  });
}

export async function add(deps: ContactsDeps, ctx: OrgContext, req: crm.AddNoteRequest__Output) {
  requireCan(ctx, 'contacts:write');
  const { orgId } = ctx;
  const content = requireText(req.content, 'content', rules.NOTE_MAX);
  const contact = await visibleContact(deps, ctx, orgId, req.contactId);
  return withTransaction(deps.pool, async (tx) => {
    const note = await repo.insertNote(tx, {
      id: randomUUID(),
      orgId,
      contactId: contact.id,
      content,
      createdBy: isUuid(ctx.userId) ? ctx.userId : null,
    });
    await recordActivity(tx, { orgId, contactId: contact.id, type: 'note_added', data: content, at: note.created_at });
    await noteEvent(tx, 'contact.note_created', ctx, note);
    return repo.toNote(note);
  });
}

export async function update(deps: ContactsDeps, ctx: OrgContext, req: crm.UpdateNoteRequest__Output) {
  requireCan(ctx, 'contacts:write');
  const { orgId } = ctx;
  const content = requireText(req.content, 'content', rules.NOTE_MAX);
  const contact = await visibleContact(deps, ctx, orgId, req.contactId);
  return withTransaction(deps.pool, async (tx) => {
    const before = await lockNote(tx, orgId, contact.id, req.noteId);
    requireAuthorOrLead(ctx, before, 'edit');
    const note = await repo.updateNoteContent(tx, orgId, before.id, content);
    await recordActivity(tx, { orgId, contactId: contact.id, type: 'note_updated', data: content });
    await noteEvent(tx, 'contact.note_updated', ctx, note);
    return repo.toNote(note);
  });
}

export async function remove(deps: ContactsDeps, ctx: OrgContext, req: crm.NoteRef__Output) {
  requireCan(ctx, 'contacts:write');
  const { orgId } = ctx;
  const contact = await visibleContact(deps, ctx, orgId, req.contactId);
  await withTransaction(deps.pool, async (tx) => {
    const note = await lockNote(tx, orgId, contact.id, req.noteId);
    requireAuthorOrLead(ctx, note, 'delete');
    await repo.deleteNote(tx, orgId, note.id);
    await recordActivity(tx, { orgId, contactId: contact.id, type: 'note_deleted', data: note.content });
    await noteEvent(tx, 'contact.note_deleted', ctx, note);
  });
  return { ok: true, message: 'Note deleted' };
}
