import { Router } from 'express';
import { z } from 'zod';
import type { RouteDeps } from './deps';
import type { ServiceRoutes } from './services';
import { ctxOf } from '../http/principal';
import { body, pageParams, s } from '../http/validate';

/** A note's text: 1 to 5000 characters once trimmed (messaging checks the same). */
export const NewNote = z.object({ content: s.requiredText(5000) });

/**
 * Private notes inside a conversation (owned by messaging): the team's own remarks and @mentions, shown in
 * the conversation's timeline and never sent to the chat network.
 */
export function conversationNotesRoutes({ clients }: RouteDeps): ServiceRoutes {
  const internal = Router();
  const messaging = () => clients.messaging;

  internal.post('/conversations/:id/notes', async (req, res) => {
    const note = await messaging().CreateNote({ conversationId: req.params.id, content: body(req, NewNote).content }, ctxOf(req, res));
    res.status(201).json(note);
  });
  internal.get('/conversations/:id/notes', async (req, res) => {
    res.json(await messaging().ListNotes({ conversationId: req.params.id, ...pageParams(req, 50, 100) }, ctxOf(req, res)));
  });
  internal.delete('/conversations/:id/notes/:noteId', async (req, res) => {
    await messaging().DeleteNote({ conversationId: req.params.id, noteId: req.params.noteId }, ctxOf(req, res));
    res.status(204).end();
  });

  return { internal };
}
