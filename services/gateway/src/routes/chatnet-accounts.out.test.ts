import { accountOut, accountStatusOut, assignmentOut, liveStatusOut, seenByAgentOut, sentOut } from './chatnet-accounts.out';
import { account, assignment, connectedAccount } from '../test-support/chatnet-fixtures';
import { AT, ID, OTHER_ID } from '../test-support/crm-fixtures';

describe('chat-network account mappers', () => {
  it('accountOut: a new account shows every absent value as null and is disconnected', () => {
    expect(accountOut(account())).toEqual({
      id: ID,
      chatnetUid: null,
      displayName: 'Line 1',
      avatarUrl: null,
      phone: null,
      status: 'qr_pending',
      liveStatus: { state: 'disconnected', connectedAt: null, lastHeartbeat: null },
      ownerUserId: null,
      owner: null,
      hasProxy: false,
      lastConnectedAt: null,
      createdAt: AT,
    });
  });

  it('accountOut: a connected account keeps every value', () => {
    expect(accountOut(connectedAccount())).toEqual({
      id: ID,
      chatnetUid: 'uid-1',
      displayName: 'Line 1',
      avatarUrl: 'https://cdn.example.com/a.png',
      phone: '+84912345678',
      status: 'connected',
      liveStatus: { state: 'connected', connectedAt: AT, lastHeartbeat: AT },
      ownerUserId: OTHER_ID,
      owner: { id: OTHER_ID, fullName: 'Bob', email: 'bob@example.com' },
      hasProxy: true,
      lastConnectedAt: AT,
      createdAt: AT,
    });
  });

  it('liveStatusOut and accountStatusOut: unset times are null', () => {
    expect(liveStatusOut({ state: 'connecting' })).toEqual({ state: 'connecting', connectedAt: null, lastHeartbeat: null });
    expect(accountStatusOut({ accountId: ID, liveStatus: null })).toEqual({
      accountId: ID,
      liveStatus: { state: 'disconnected', connectedAt: null, lastHeartbeat: null },
    });
  });

  it('assignmentOut: no cap, no reply timeout and no action are null; set ones pass through', () => {
    const off = { onlyOnline: false, replyTimeoutMinutes: null, onTimeout: null, drainBacklog: false };
    expect(assignmentOut(assignment())).toEqual({ chatnetAccountId: ID, mode: 'manual', userIds: [], maxOpenPerUser: null, ...off });
    expect(assignmentOut(assignment({ mode: 'round_robin', userIds: [OTHER_ID], maxOpenPerUser: 5 }))).toEqual({
      chatnetAccountId: ID,
      mode: 'round_robin',
      userIds: [OTHER_ID],
      maxOpenPerUser: 5,
      ...off,
    });
    const repairs = { onlyOnline: true, replyTimeoutMinutes: 15, onTimeout: 'reassign', drainBacklog: true };
    expect(assignmentOut(assignment({ mode: 'round_robin', userIds: [OTHER_ID], ...repairs }))).toEqual({
      chatnetAccountId: ID,
      mode: 'round_robin',
      userIds: [OTHER_ID],
      maxOpenPerUser: null,
      ...repairs,
    });
  });

  it('seenByAgentOut lists the thread and its messages', () => {
    const m = { chatnetMessageId: 'm1', cliMsgId: 'c1', fromUid: 'uid-1', sentAt: AT };
    expect(seenByAgentOut({ threadId: 't1', threadType: 'user', messages: [m], at: AT })).toEqual({
      threadId: 't1',
      threadType: 'user',
      messages: [m],
      at: AT,
    });
  });

  it('sentOut: what the sandbox network received, its quote and recall null when none', () => {
    const file = { fileName: 'a.pdf', mimeType: 'application/pdf', size: 12, sha256: 'ab'.repeat(32) };
    const m = {
      chatnetMessageId: 'm1',
      threadId: 't1',
      threadType: 'user',
      content: 'hi',
      contentType: 'text',
      sentAt: AT,
      attachments: [file],
      quote: null,
    };
    expect(sentOut(m)).toEqual({ ...m, quote: null, recalledAt: null });
    expect(sentOut({ ...m, quote: { chatnetMessageId: 'm0' }, recalledAt: AT })).toMatchObject({ quote: { chatnetMessageId: 'm0' }, recalledAt: AT });
  });
});
