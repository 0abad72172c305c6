import { z } from 'zod';
import { messagingRules } from '@crm/validation';
import { s } from '../http/validate';

/** A note's text: 1 to CONVERSATION_NOTE_MAX characters once trimmed (messaging checks the same rule). */
export const NewNote = z.object({ content: s.requiredText(messagingRules.CONVERSATION_NOTE_MAX) });

/** A private note of a conversation (conversationNoteOut is typed by it); the timeline's notes extend it. */
export const ConversationNote = z.object({
  id: z.string(),
  content: z.string(),
  authorId: z.string(),
  mentions: z.array(z.string()).meta({ description: 'user ids mentioned, in order of first mention' }),
  createdAt: z.string().meta({ description: 'ISO 8601 UTC timestamp' }),
});
