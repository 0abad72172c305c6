import { Router } from 'express';
import type { CrmClient } from './crm-client';
import { ctxOf } from '../../http/principal';
import { body } from '../../http/validate';
import { noteOut } from './notes.out';
import { Note } from './notes.schemas';

/** A contact's notes (internal, bearer). */
export function noteRoutes(internal: Router, crm: () => CrmClient): void {
  internal.post('/contacts/:id/notes', async (req, res) => {
    const { content } = body(req, Note);
    res.status(201).json(noteOut(await crm().AddNote({ contactId: req.params.id, content }, ctxOf(req, res))));
  });
  // The note's author, or a team lead and above (crm decides; 403 otherwise).
  internal.put('/contacts/:id/notes/:noteId', async (req, res) => {
    const { content } = body(req, Note);
    res.json(noteOut(await crm().UpdateNote({ contactId: req.params.id, noteId: req.params.noteId, content }, ctxOf(req, res))));
  });
  internal.delete('/contacts/:id/notes/:noteId', async (req, res) => {
    await crm().DeleteNote({ contactId: req.params.id, noteId: req.params.noteId }, ctxOf(req, res));
    res.status(204).end();
  });
}
