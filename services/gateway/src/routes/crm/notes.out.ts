import type { z } from 'zod';
import type { crm } from '@crm/proto-types';
import type { ContactNote } from './notes.schemas';
import { orNull } from '../../http/shape';

/** A note on a contact: its author is null when nobody signed in wrote it (an API key, an import). */
export function noteOut(n: crm.Note__Output): z.input<typeof ContactNote> {
  return { id: n.id, contactId: n.contactId, content: n.content, createdBy: orNull(n.createdBy), createdAt: n.createdAt };
}
