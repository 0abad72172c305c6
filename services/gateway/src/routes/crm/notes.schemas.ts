import { z } from 'zod';
import { crmRules as rules } from '@crm/validation';
import { s } from '../../http/validate';

export const Note = z.object({ content: s.requiredText(rules.NOTE_MAX) });

/** A note on a contact (noteOut is typed by it). */
export const ContactNote = z.object({
  id: z.string(),
  contactId: z.string(),
  content: z.string(),
  createdBy: z.string().nullable().meta({ description: 'the author; null when no signed-in user wrote it' }),
  createdAt: z.string().meta({ description: 'ISO 8601 UTC timestamp' }),
});
