import { Router } from 'express';
import { z } from 'zod';
import { messagingRules } from '@crm/validation';
import type { RouteDeps, ServiceRoutes } from './deps';
import { ctxOf } from '../http/principal';
import { conversationNoteOut } from './chat.out';
import { body, pageParams, s } from '../http/validate';

/** A note's text: 1 to CONVERSATION_NOTE_MAX characters once trimmed (messaging checks the same rule). */
export const NewNote = z.object({ content: s.requiredText(messagingRules.CONVERSATION_NOTE_MAX) });

/**
 * Private notes inside a conversation (owned by messaging): the team's own remarks and @mentions, shown in
 * the conversation's timeline and never sent to the chat network.
 */
export function conversationNotesRoutes({ clients }: RouteDeps): ServiceRoutes {
  const internal = Router();
  const messaging = () => clients.messaging;

  internal.post('/conversations/:id/notes', async (req, res) => {
    const note = await messaging().CreateNote({ conversationId: req.params.id, content: body(req, NewNote).content }, ctxOf(req, res));
    res.status(201).json(conversationNoteOut(note));
  });
  internal.get('/conversations/:id/notes', async (req, res) => {
    const out = await messaging().ListNotes({ conversationId: req.params.id, ...pageParams(req, 50, 100) }, ctxOf(req, res));
    res.json({ data: out.data.map(conversationNoteOut), pagination: out.pagination });
  });
  internal.delete('/conversations/:id/notes/:noteId', async (req, res) => {
    await messaging().DeleteNote({ conversationId: req.params.id, noteId: req.params.noteId }, ctxOf(req, res));
    res.status(204).end();
  });

  return { internal };
}
