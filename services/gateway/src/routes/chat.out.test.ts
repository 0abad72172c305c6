import {
  attachmentOut,
  conversationNoteOut,
  conversationOut,
  countsOut,
  folderOut,
  headerOut,
  inboxSettingsOut,
  messageOut,
  moveOut,
  presetOut,
  publicConversationOut,
  publicMessageOut,
  searchHitOut,
  sentOut,
  timelineOut,
} from './chat.out';
import * as f from '../test-support/messaging-fixtures';

const { AT, ID, LATER, OTHER_ID } = f;
const noOwner = { assigneeId: null, teamId: null, snoozedUntil: null, priority: null, sla: null, csat: null };
const owner = {
  assigneeId: OTHER_ID,
  teamId: OTHER_ID,
  snoozedUntil: LATER,
  priority: 'urgent',
  // A window not running (next response) is null.
  sla: { policyId: OTHER_ID, firstResponseDueAt: LATER, nextResponseDueAt: null, resolutionDueAt: LATER, status: 'breached', breachedAt: AT },
  csat: { rating: 4, comment: 'Quick', respondedAt: LATER },
};

describe('conversation mappers', () => {
  it('conversationOut: absent contact, avatar, last message, owner, priority and SLA are null', () => {
    expect(conversationOut(f.emptyConversation())).toEqual({
      id: ID,
      contactId: null,
      contactName: 'Lan',
      contactAvatar: null,
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
      ...noOwner,
    });
  });

  it('conversationOut: each set field passes through', () => {
    expect(conversationOut(f.fullConversation())).toEqual({
      id: ID,
      contactId: OTHER_ID,
      contactName: 'Lan',
      contactAvatar: 'https://cdn.example.com/lan.png',
      type: 'user',
      chatnetAccountId: OTHER_ID,
      threadId: 'uid-lan',
      messageCount: 3,
      unreadCount: 2,
      lastMessage: { id: OTHER_ID, content: 'Hi', contentType: 'text', senderName: 'Lan', sentAt: LATER },
      status: 'snoozed',
      createdAt: AT,
      lastActivityAt: AT,
      isReplied: false,
      folderIds: [OTHER_ID],
      ...owner,
    });
  });

  it('a last message without a sender name says null', () => {
    const c = { ...f.fullConversation(), lastMessage: { id: ID, content: '', contentType: 'image', senderName: '', sentAt: AT } };
    expect(conversationOut(c).lastMessage).toEqual({ id: ID, content: '', contentType: 'image', senderName: null, sentAt: AT });
  });

  it('a field messaging adds to its answer reaches no client until a mapper names it', () => {
    const withExtra = { ...f.fullConversation(), internalScore: 7 } as ReturnType<typeof f.fullConversation>;
    expect(conversationOut(withExtra)).not.toHaveProperty('internalScore');
    expect(messageOut({ ...f.fullMessage(), orgId: OTHER_ID } as ReturnType<typeof f.fullMessage>)).not.toHaveProperty('orgId');
  });

  it('headerOut: the conversation without lastMessage and isReplied, nulls as in conversationOut', () => {
    const { lastMessage: _l, isReplied: _r, ...emptyRow } = conversationOut(f.emptyConversation());
    const { lastMessage: _l2, isReplied: _r2, ...fullRow } = conversationOut(f.fullConversation());
    expect(headerOut(f.emptyHeader())).toEqual(emptyRow);
    expect(headerOut(f.fullHeader())).toEqual(fullRow);
  });

  it('moveOut: the message and the conversation as conversationOut shapes it', () => {
    expect(moveOut({ message: 'Conversation archived', conversation: f.emptyConversation() })).toEqual({
      message: 'Conversation archived',
      conversation: conversationOut(f.emptyConversation()),
    });
    expect(() => moveOut({ message: 'x', conversation: null })).toThrow('messaging move: conversation is missing from the answer');
  });
});

describe('message mappers', () => {
  it('messageOut: what the organization sent has no uid, no sender name, no user, no receipt, no group sender: all null', () => {
    expect(messageOut(f.emptyMessage())).toEqual({
      id: ID,
      conversationId: OTHER_ID,
      content: '',
      contentType: 'text',
      senderUid: null,
      senderName: null,
      isFromChatnet: false,
      isRead: true,
      isReplied: false,
      sentAt: AT,
      status: 'sent',
      sentByUserId: null,
      source: 'automation',
      attachments: [],
      seenAt: null,
      senderContactId: null,
      quote: null,
      reactions: [],
      recalledAt: null,
    });
  });

  it('messageOut: each set field passes through, attachments field by field', () => {
    expect(messageOut(f.fullMessage())).toEqual({
      id: ID,
      conversationId: OTHER_ID,
      content: 'We open at nine',
      contentType: 'text',
      senderUid: 'uid-lan',
      senderName: 'Lan',
      isFromChatnet: true,
      isRead: true,
      isReplied: true,
      sentAt: AT,
      status: 'seen',
      sentByUserId: OTHER_ID,
      source: 'ui',
      attachments: [{ ...f.attachment(), expiredAt: null }],
      seenAt: LATER,
      senderContactId: OTHER_ID,
      quote: { messageId: OTHER_ID, content: 'Are you open?', senderName: 'Lan' },
      reactions: [
        { emoji: '👍', by: 'agent', userId: OTHER_ID, at: AT },
        { emoji: '❤️', by: 'contact', userId: 'uid-lan', at: LATER },
      ],
      recalledAt: null,
    });
    // A file with its bytes has expiredAt null; one past ATTACHMENTS_RETENTION_DAYS says when they went.
    expect(attachmentOut(f.attachment())).toEqual({ ...f.attachment(), expiredAt: null });
    expect(attachmentOut({ ...f.attachment(), expiredAt: LATER }).expiredAt).toBe(LATER);
  });

  it('messageOut: a recalled message keeps its content unless it is withheld from the reader (null), and a quote withheld the same way', () => {
    const recalled = { ...f.fullMessage(), status: 'recalled', recalledAt: LATER };
    expect(messageOut(recalled)).toMatchObject({ status: 'recalled', recalledAt: LATER, content: 'We open at nine' });
    expect(messageOut({ ...recalled, contentWithheld: true }).content).toBeNull();
    const { content: _c, ...withheldQuote } = f.quote();
    expect(messageOut({ ...f.fullMessage(), quote: withheldQuote }).quote).toEqual({ messageId: OTHER_ID, content: null, senderName: 'Lan' });
  });

  it('conversationNoteOut lists the note’s fields', () => {
    expect(conversationNoteOut(f.note())).toEqual({
      id: ID,
      content: 'Call her back @Olive',
      authorId: OTHER_ID,
      mentions: [OTHER_ID],
      createdAt: AT,
    });
    expect(conversationNoteOut({ ...f.note(), mentions: [] }).mentions).toEqual([]);
  });

  it('timelineOut: a message item is the message with kind; a note item the note with kind and private', () => {
    expect(timelineOut({ kind: 'message', message: f.emptyMessage(), note: null })).toEqual({ kind: 'message', ...messageOut(f.emptyMessage()) });
    expect(timelineOut({ kind: 'note', message: null, note: f.note() })).toEqual({ kind: 'note', ...conversationNoteOut(f.note()), private: true });
  });

  it('timelineOut: an item without what its kind names is a broken answer, not a TypeError', () => {
    expect(() => timelineOut({ kind: 'note', message: f.emptyMessage(), note: null })).toThrow('timeline note is missing from the answer');
    expect(() => timelineOut({ kind: 'message', message: null, note: null })).toThrow('timeline message is missing from the answer');
  });

  it('sentOut: the stored message without `replayed`; no sender name is null', () => {
    expect(sentOut(f.sent({ replayed: true }))).toEqual({
      id: ID,
      conversationId: OTHER_ID,
      content: 'hi',
      contentType: 'text',
      senderName: null,
      sentAt: AT,
      status: 'sent',
      attachments: [],
      quote: null,
      reactions: [],
      recalledAt: null,
    });
    expect(sentOut(f.sent({ quote: f.quote() })).quote).toEqual(f.quote());
    expect(sentOut(f.sent({ senderName: 'Olive', attachments: [f.attachment()] }))).toMatchObject({
      senderName: 'Olive',
      attachments: [f.attachment()],
    });
  });

  it('presetOut: no category is null, a category passes through', () => {
    expect(presetOut(f.preset())).toEqual({
      id: ID,
      name: 'Opening hours',
      content: 'We open at nine',
      category: null,
      createdAt: AT,
      updatedAt: LATER,
    });
    expect(presetOut(f.preset('hours')).category).toBe('hours');
  });
});

describe('public mappers', () => {
  it('publicConversationOut: no contact, last message or assignee is null', () => {
    expect(publicConversationOut(f.emptyPublicConversation())).toEqual({
      id: ID,
      threadType: 'user',
      externalThreadId: 'uid-lan',
      lastMessageAt: null,
      unreadCount: 0,
      isReplied: true,
      contact: null,
      assigneeId: null,
      updatedAt: AT,
      csat: null,
    });
  });

  it('publicConversationOut: each set field passes through; a contact without phone or avatar says null', () => {
    expect(publicConversationOut(f.fullPublicConversation())).toEqual({
      id: ID,
      threadType: 'user',
      externalThreadId: 'uid-lan',
      lastMessageAt: LATER,
      unreadCount: 1,
      isReplied: false,
      contact: { id: OTHER_ID, fullName: 'Lan Nguyen', phone: '+84912345678', avatarUrl: 'https://cdn.example.com/lan.png' },
      assigneeId: OTHER_ID,
      updatedAt: AT,
      // A comment not given is null.
      csat: { rating: 5, comment: null, respondedAt: LATER },
    });
    const bare = { ...f.fullPublicConversation(), contact: { id: OTHER_ID, fullName: 'Lan', phone: '' } };
    expect(publicConversationOut(bare).contact).toEqual({ id: OTHER_ID, fullName: 'Lan', phone: null, avatarUrl: null });
  });

  it('publicMessageOut: no sender name is null; each field passes through', () => {
    expect(publicMessageOut(f.publicMessage())).toEqual({
      id: ID,
      senderType: 'system',
      senderName: null,
      content: 'hi',
      contentType: 'text',
      sentAt: AT,
      attachments: [],
      conversationId: OTHER_ID,
      status: 'sent',
      quote: null,
      reactions: [],
      recalledAt: null,
    });
    expect(publicMessageOut(f.publicMessage({ quote: f.quote(), reactions: f.reactions(), recalledAt: LATER, status: 'recalled' }))).toMatchObject({
      quote: f.quote(),
      reactions: f.reactions(),
      recalledAt: LATER,
      status: 'recalled',
    });
    expect(
      publicMessageOut(f.publicMessage({ senderType: 'contact', senderName: 'Lan', attachments: [f.attachment()], status: 'seen' })),
    ).toMatchObject({
      senderType: 'contact',
      senderName: 'Lan',
      attachments: [f.attachment()],
      status: 'seen',
    });
  });
});

describe('folder, counts, inbox settings and search mappers', () => {
  it('folderOut names every field of a folder and nothing else', () => {
    expect(folderOut({ ...f.folder(), extra: 'x' } as ReturnType<typeof f.folder>)).toEqual({
      id: ID,
      name: 'VIP',
      color: '#3B82F6',
      conversationCount: 3,
      createdAt: AT,
    });
  });

  it('countsOut names every tab count and nothing else', () => {
    expect(countsOut({ ...f.counts(), extra: 1 } as ReturnType<typeof f.counts>, { v1: 2 })).toEqual({
      total: 9,
      unread: 4,
      unreplied: 2,
      archived: 1,
      mine: 3,
      unassigned: 5,
      views: { v1: 2 },
    });
  });

  it('inboxSettingsOut names every setting, null for what is not set, and nothing else', () => {
    expect(inboxSettingsOut({ ...f.inboxSettings(), extra: 'x' } as ReturnType<typeof f.inboxSettings>)).toEqual({
      agentVisibility: 'own',
      autoCloseAfterMinutes: 30,
      autoCloseMessage: null,
      outOfHoursMessage: 'We are closed',
      csat: { enabled: true, message: 'Rate us 1-5' },
    });
  });

  it('searchHitOut keeps the highlighted fragment and the sender type', () => {
    expect(searchHitOut({ ...f.searchHit(), extra: 'x' } as ReturnType<typeof f.searchHit>)).toEqual({
      id: ID,
      conversationId: OTHER_ID,
      content: 'Is the order shipped?',
      sentAt: AT,
      senderType: 'contact',
      highlight: 'Is the <mark>order</mark> shipped?',
    });
  });
});
