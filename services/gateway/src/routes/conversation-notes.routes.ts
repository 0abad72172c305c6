import { page } from './common.schemas';
import { responseContract } from '../http/response-contract';
import { routeArea } from '../http/route-area';
import type { RouteDeps, ServiceRoutes } from './deps';
import { conversationNoteOut } from './chat.out';
import { ConversationNote, NewNote } from './conversation-notes.schemas';

/**
 * Private notes inside a conversation (owned by messaging): the team's own remarks and @mentions, shown in
 * the conversation's timeline and never sent to the chat network. Served and documented from these declarations.
 */
export const conversationNoteRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Conversation notes' });
const messaging = (deps: RouteDeps) => deps.clients.messaging;

conversationNoteRoutes.route('POST /conversations/:id/notes', {
  summary: 'Add a private note (never sent to the chat network); @mentions of users notify them',
  body: NewNote,
  status: 201,
  response: ConversationNote,
  handler: async ({ param, body, ctx, deps }) =>
    conversationNoteOut(await messaging(deps).CreateNote({ conversationId: param('id'), content: body.content }, ctx)),
});
conversationNoteRoutes.route('GET /conversations/:id/notes', {
  summary: 'The conversation’s private notes, newest first',
  paging: { limit: 50, max: 100 },
  response: page(ConversationNote),
  handler: async ({ param, page, ctx, deps }) => {
    const out = await messaging(deps).ListNotes({ conversationId: param('id'), ...page }, ctx);
    return { data: out.data.map(conversationNoteOut), pagination: out.pagination! };
  },
});
conversationNoteRoutes.route('DELETE /conversations/:id/notes/:noteId', {
  summary: 'Delete a note (its author, or a team lead and above)',
  status: 204,
  response: null,
  handler: async ({ param, ctx, deps }) => {
    await messaging(deps).DeleteNote({ conversationId: param('id'), noteId: param('noteId') }, ctx);
  },
});

export function conversationNotesRoutes(deps: RouteDeps): ServiceRoutes {
  return { internal: conversationNoteRoutes.router(deps, responseContract(deps.config)) };
}
