import { randomUUID } from 'node:crypto';
import type { Queryable } from '@crm/db';
import { messagingRules } from '@crm/validation';
import * as repo from './notes.repo';

/**
 * A private note written by the AI assistant (issue #32 item 5): the sources of an answer it sent, or why it handed
 * the conversation to a person. No user wrote it (authorId empty) and it mentions nobody; it shows in the timeline
 * like any note, and never reaches the chat network. Written in the caller's transaction.
 */
export async function insertAssistantNote(db: Queryable, orgId: string, conversationId: string, content: string) {
  const text = content.length > messagingRules.CONVERSATION_NOTE_MAX ? `${content.slice(0, messagingRules.CONVERSATION_NOTE_MAX - 1)}…` : content;
  return repo.insert(db, { id: randomUUID(), orgId, conversationId, authorId: null, content: text, mentions: [] });
}
