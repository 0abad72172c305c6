import { routeArea } from '../../http/route-area';
import type { RouteDeps } from '../deps';
import { noteOut } from './notes.out';
import { ContactNote, Note } from './notes.schemas';

/** A contact's notes (internal, bearer); documented with the contacts. */
export const noteRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Contacts' });
const crm = (deps: RouteDeps) => deps.clients.crm;

noteRoutes.route('POST /contacts/:id/notes', {
  summary: 'Add a note to a contact',
  body: Note,
  status: 201,
  response: ContactNote,
  handler: async ({ param, body: { content }, ctx, deps }) => noteOut(await crm(deps).AddNote({ contactId: param('id'), content }, ctx)),
});
// The note's author, or a team lead and above (crm decides; 403 otherwise).
noteRoutes.route('PUT /contacts/:id/notes/:noteId', {
  summary: 'Edit a note (its author, or a team lead and above)',
  body: Note,
  response: ContactNote,
  handler: async ({ param, body: { content }, ctx, deps }) =>
    noteOut(await crm(deps).UpdateNote({ contactId: param('id'), noteId: param('noteId'), content }, ctx)),
});
noteRoutes.route('DELETE /contacts/:id/notes/:noteId', {
  summary: 'Delete a note (its author, or a team lead and above)',
  status: 204,
  response: null,
  handler: async ({ param, ctx, deps }) => {
    await crm(deps).DeleteNote({ contactId: param('id'), noteId: param('noteId') }, ctx);
  },
});
