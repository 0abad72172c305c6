// Sample messaging answers shared by the mapper tests (not part of the build: tsconfig excludes src/test-support).
import type { messaging } from '@crm/proto-types';
import { AT, ID, OTHER_ID } from './crm-fixtures';

// messaging's answers as the gRPC client decodes them: `empty…` has every proto3 `optional` field absent, every
// unset string "" and every unset message null (what a sender that says "none" produces); `full…` has each set.

export { AT, ID, OTHER_ID };
export const LATER = '2031-02-03T04:05:06.000Z';

export function attachment(): messaging.Attachment__Output {
  return {
    id: OTHER_ID,
    filename: 'price.pdf',
    size: 2048,
    contentType: 'application/pdf',
    url: `/api/v1/chat/attachments/${OTHER_ID}`,
    uploadedAt: AT,
  };
}

export function emptyConversation(): messaging.Conversation__Output {
  return {
    id: ID,
    contactName: 'Lan',
    contactAvatar: '',
    type: 'user',
    chatnetAccountId: OTHER_ID,
    threadId: 'uid-lan',
    messageCount: 0,
    unreadCount: 0,
    lastMessage: null,
    status: 'active',
    createdAt: AT,
    lastActivityAt: AT,
    isReplied: true,
    folderIds: [],
    sla: null,
    csat: null,
  };
}

export function fullConversation(): messaging.Conversation__Output {
  return {
    ...emptyConversation(),
    contactId: OTHER_ID,
    contactAvatar: 'https://cdn.example.com/lan.png',
    messageCount: 3,
    unreadCount: 2,
    lastMessage: { id: OTHER_ID, content: 'Hi', contentType: 'text', senderName: 'Lan', sentAt: LATER },
    status: 'snoozed',
    isReplied: false,
    folderIds: [OTHER_ID],
    assigneeId: OTHER_ID,
    teamId: OTHER_ID,
    snoozedUntil: LATER,
    priority: 'urgent',
    sla: { policyId: OTHER_ID, firstResponseDueAt: LATER, resolutionDueAt: LATER, status: 'breached', breachedAt: AT },
    csat: { rating: 4, comment: 'Quick', respondedAt: LATER },
  };
}

export function emptyHeader(): messaging.ConversationHeader__Output {
  const { lastMessage: _last, isReplied: _replied, ...header } = emptyConversation();
  return header;
}

export function fullHeader(): messaging.ConversationHeader__Output {
  const { lastMessage: _last, isReplied: _replied, ...header } = fullConversation();
  return header;
}

/** A message the organization sent from the inbox: no network uid, nobody signed in, no receipt yet. */
export function emptyMessage(): messaging.Message__Output {
  return {
    id: ID,
    conversationId: OTHER_ID,
    content: '',
    contentType: 'text',
    senderUid: '',
    senderName: '',
    isFromChatnet: false,
    isRead: true,
    isReplied: false,
    sentAt: AT,
    status: 'sent',
    source: 'automation',
    attachments: [],
    quote: null,
    reactions: [],
    contentWithheld: false,
  };
}

/** A reply that quotes a message, reacted to by an agent and the contact (issue #26). */
export function quote(): messaging.Quote__Output {
  return { messageId: OTHER_ID, content: 'Are you open?', senderName: 'Lan' };
}
export function reactions(): messaging.Reaction__Output[] {
  return [
    { emoji: '👍', by: 'agent', userId: OTHER_ID, at: AT },
    { emoji: '❤️', by: 'contact', userId: 'uid-lan', at: LATER },
  ];
}

export function fullMessage(): messaging.Message__Output {
  return {
    ...emptyMessage(),
    content: 'We open at nine',
    senderUid: 'uid-lan',
    senderName: 'Lan',
    isFromChatnet: true,
    isReplied: true,
    status: 'seen',
    sentByUserId: OTHER_ID,
    source: 'ui',
    attachments: [attachment()],
    seenAt: LATER,
    senderContactId: OTHER_ID,
    quote: quote(),
    reactions: reactions(),
  };
}

export function note(): messaging.Note__Output {
  return { id: ID, content: 'Call her back @Olive', authorId: OTHER_ID, mentions: [OTHER_ID], createdAt: AT };
}

export function preset(category = ''): messaging.Preset__Output {
  return { id: ID, name: 'Opening hours', content: 'We open at nine', category, createdAt: AT, updatedAt: LATER };
}

export function sent(over: Partial<messaging.SentMessage__Output> = {}): messaging.SentMessage__Output {
  return {
    id: ID,
    conversationId: OTHER_ID,
    content: 'hi',
    contentType: 'text',
    senderName: '',
    sentAt: AT,
    status: 'sent',
    attachments: [],
    replayed: false,
    quote: null,
    reactions: [],
    ...over,
  };
}

export function emptyPublicConversation(): messaging.PublicConversation__Output {
  return { id: ID, threadType: 'user', externalThreadId: 'uid-lan', unreadCount: 0, isReplied: true, contact: null, updatedAt: AT, csat: null };
}

export function fullPublicConversation(): messaging.PublicConversation__Output {
  return {
    ...emptyPublicConversation(),
    lastMessageAt: LATER,
    unreadCount: 1,
    isReplied: false,
    contact: { id: OTHER_ID, fullName: 'Lan Nguyen', phone: '+84912345678', avatarUrl: 'https://cdn.example.com/lan.png' },
    assigneeId: OTHER_ID,
    csat: { rating: 5, respondedAt: LATER },
  };
}

export function publicMessage(over: Partial<messaging.PublicMessage__Output> = {}): messaging.PublicMessage__Output {
  return {
    id: ID,
    senderType: 'system',
    senderName: '',
    content: 'hi',
    contentType: 'text',
    sentAt: AT,
    attachments: [],
    conversationId: OTHER_ID,
    status: 'sent',
    quote: null,
    reactions: [],
    ...over,
  };
}

export function folder(): messaging.Folder__Output {
  return { id: ID, name: 'VIP', color: '#3B82F6', conversationCount: 3, createdAt: AT };
}

export function counts(): messaging.Counts__Output {
  return { total: 9, unread: 4, unreplied: 2, archived: 1, mine: 3, unassigned: 5 };
}

export function inboxSettings(): messaging.InboxSettings__Output {
  return { agentVisibility: 'own', autoCloseAfterMinutes: 30, outOfHoursMessage: 'We are closed', csat: { enabled: true, message: 'Rate us 1-5' } };
}

export function searchHit(): messaging.MessageSearchHit__Output {
  return {
    id: ID,
    conversationId: OTHER_ID,
    content: 'Is the order shipped?',
    sentAt: AT,
    senderType: 'contact',
    highlight: 'Is the <mark>order</mark> shipped?',
  };
}
