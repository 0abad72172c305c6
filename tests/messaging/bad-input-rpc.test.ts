import type { ClientFor } from '@crm/grpc-kit';
import { status } from '@crm/grpc-kit';
import { eventually } from '@crm/testing';
import { httpIssue, rpcIssue } from '../support/rule-parity';
import { startStack, Stack } from '../support/stack';
import { eventBus, fakeConnector, fakeCrm, messagingClient, orgWithKey } from './support';

// Each of messaging's contract rules is stated once (@crm/validation messagingRules): the gateway's schema and
// messaging's own check of a direct gRPC caller (automation, campaigns, crm) refuse the same value, naming the
// same field, with the same words.
describe('messaging: one rule, one wording over HTTP and gRPC', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let connector: Awaited<ReturnType<typeof fakeConnector>>;
  let crm: Awaited<ReturnType<typeof fakeCrm>>;
  let org: Awaited<ReturnType<typeof orgWithKey>>;
  let rpc: ClientFor<'messaging.v1.MessagingService'>;
  let conversationId: string;
  let folderId: string;
  const unknownId = '00000000-0000-4000-8000-000000000000';

  beforeAll(async () => {
    connector = await fakeConnector();
    crm = await fakeCrm();
    await crm.up();
    stack = await startStack({ services: ['messaging'], serviceEnv: { messaging: { CONNECTOR_ADDR: connector.addr, CRM_ADDR: crm.addr } } });
    bus = await eventBus(stack);
    rpc = messagingClient(stack);
    org = await orgWithKey(stack.url, 'Rules Org');
    await bus.inbound(org.orgId, { accountId: connector.account(org.orgId), fromUid: 'uid-1', fromName: 'Anh' });
    conversationId = await eventually(async () => (await org.owner.get('/api/v1/conversations')).body.data[0]?.id);
    folderId = (await org.owner.post('/api/v1/chat/folders', { name: 'VIP' })).body.id;
  }, 60_000);
  afterAll(async () => {
    rpc?.close();
    await bus?.close();
    await stack?.stop();
    await connector?.down();
    await crm?.down();
  });

  const ctx = () => ({ orgId: org.orgId, userId: org.user.id, role: 'owner' });
  /** Both refuse it: a 400 and INVALID_ARGUMENT, on `field`, with the same message. */
  async function expectSameRefusal(http: Promise<Parameters<typeof httpIssue>[0]>, call: Promise<unknown>, field: string, message: string) {
    // Both requests are already under way: the gRPC refusal is caught now, not after the HTTP answer, or a
    // refusal that arrives first is an unhandled rejection that fails the test.
    const [httpAnswer, rpcAnswer] = await Promise.all([http, rpcIssue(call)]);
    expect(httpIssue(httpAnswer)).toEqual({ status: 400, issue: { field, message } });
    expect(rpcAnswer).toEqual({ code: status.INVALID_ARGUMENT, issue: { field, message } });
  }

  it.each([
    ['a color that is no hex color', { name: 'Blue', color: 'blue' }, 'color', 'must be a hex color such as #3B82F6'],
    ['a name of 101 characters', { name: 'x'.repeat(101) }, 'name', 'must be at most 100 characters'],
    ['no name', { name: '  ' }, 'name', 'is required'],
  ])('POST /chat/folders and CreateFolder with %s', async (_what, input, field, message) => {
    await expectSameRefusal(org.owner.post('/api/v1/chat/folders', input), rpc.CreateFolder(input, ctx()), field, message);
  });

  it('POST /chat/folders/:id/conversations and AddConversationsToFolder with 501 ids', async () => {
    // 501 different ids: messaging counts each id once.
    const conversationIds = Array.from({ length: 501 }, (_, i) => `${unknownId.slice(0, -3)}${String(i).padStart(3, '0')}`);
    await expectSameRefusal(
      org.owner.post(`/api/v1/chat/folders/${folderId}/conversations`, { conversationIds }),
      rpc.AddConversationsToFolder({ folderId, conversationIds }, ctx()),
      'conversationIds',
      'must list at most 500 conversations',
    );
  });

  it.each([
    ['content of 20001 characters', { name: 'P', content: 'x'.repeat(20_001) }, 'content', 'must be at most 20000 characters'],
    ['a category of 101 characters', { name: 'P', content: 'x', category: 'c'.repeat(101) }, 'category', 'must be at most 100 characters'],
    ['a name of 201 characters', { name: 'n'.repeat(201), content: 'x' }, 'name', 'must be at most 200 characters'],
  ])('POST /chat/presets and CreatePreset with %s', async (_what, input, field, message) => {
    await expectSameRefusal(org.owner.post('/api/v1/chat/presets', input), rpc.CreatePreset(input, ctx()), field, message);
  });

  it.each([
    ['a content type that is no type name', { content: 'hi', contentType: 'text plain' }, 'contentType', 'must be a short type name such as text'],
    ['content of 20001 characters', { content: 'x'.repeat(20_001) }, 'content', 'must be at most 20000 characters'],
  ])('POST /conversations/:id/messages and SendMessage with %s', async (_what, input, field, message) => {
    await expectSameRefusal(
      org.owner.post(`/api/v1/conversations/${conversationId}/messages`, input),
      rpc.SendMessage({ conversationId, ...input, source: 'ui' }, ctx()),
      field,
      message,
    );
  });

  it('POST /conversations/:id/messages and SendMessage with 11 attachments', async () => {
    const ids = Array.from({ length: 11 }, (_, i) => `${unknownId.slice(0, -2)}${String(i).padStart(2, '0')}`);
    await expectSameRefusal(
      org.owner.post(`/api/v1/conversations/${conversationId}/messages`, { content: 'hi', attachments: ids }),
      rpc.SendMessage({ conversationId, content: 'hi', attachmentIds: ids, source: 'ui' }, ctx()),
      'attachments',
      'at most 10 attachments per message',
    );
  });

  it('POST /conversations/:id/messages with sendAt and ScheduleMessage with a sendAt that is no timestamp', async () => {
    await expectSameRefusal(
      org.owner.post(`/api/v1/conversations/${conversationId}/messages`, { content: 'hi', sendAt: 'tomorrow' }),
      rpc.ScheduleMessage({ conversationId, content: 'hi', sendAt: 'tomorrow' }, ctx()),
      'sendAt',
      'must be an ISO 8601 timestamp in years 0001-9999',
    );
  });

  it('PUT /scheduled-messages/:id and UpdateScheduledMessage with nothing to change', async () => {
    await expectSameRefusal(
      org.owner.put(`/api/v1/scheduled-messages/${unknownId}`, {}),
      rpc.UpdateScheduledMessage({ id: unknownId }, ctx()),
      'content',
      'give content or sendAt to change',
    );
  });

  it('GET /scheduled-messages and ListScheduledMessages with an unknown status', async () => {
    await expectSameRefusal(
      org.owner.get('/api/v1/scheduled-messages?status=later'),
      rpc.ListScheduledMessages({ status: 'later', page: 1, limit: 10 }, ctx()),
      'status',
      'must be one of scheduled, sent, cancelled, failed',
    );
  });

  it('POST /conversations/:id/notes and CreateNote with 5001 characters', async () => {
    const content = 'n'.repeat(5001);
    await expectSameRefusal(
      org.owner.post(`/api/v1/conversations/${conversationId}/notes`, { content }),
      rpc.CreateNote({ conversationId, content }, ctx()),
      'content',
      'must be at most 5000 characters',
    );
  });

  it.each([
    ['an unknown status', { status: 'bogus' }, 'status', 'must be one of active, pending, snoozed, closed, archived'],
    [
      'a wake-up time without status snoozed',
      { status: 'active', snoozedUntil: '2031-01-01T00:00:00.000Z' },
      'snoozedUntil',
      'is only for status snoozed',
    ],
    ['status snoozed without a wake-up time', { status: 'snoozed' }, 'snoozedUntil', 'is required for status snoozed'],
  ])('PUT /conversations/:id/status and SetConversationStatus with %s', async (_what, input, field, message) => {
    await expectSameRefusal(
      org.owner.put(`/api/v1/conversations/${conversationId}/status`, input),
      rpc.SetConversationStatus({ id: conversationId, ...input }, ctx()),
      field,
      message,
    );
  });

  it('PUT /conversations/:id/messages/:messageId and UpdateMessageFlags with neither flag', async () => {
    await expectSameRefusal(
      org.owner.put(`/api/v1/conversations/${conversationId}/messages/${unknownId}`, {}),
      rpc.UpdateMessageFlags({ conversationId, messageId: unknownId }, ctx()),
      'isRead',
      'send isRead and/or isReplied',
    );
  });

  it('GET /conversations and ListConversations with an assignee that is no user id', async () => {
    await expectSameRefusal(
      org.owner.get('/api/v1/conversations?assigneeId=someone'),
      rpc.ListConversations({ page: 1, limit: 10, assigneeId: 'someone' }, ctx()),
      'assigneeId',
      'must be a user id, me or unassigned',
    );
  });

  it('GET /messages/search and SearchMessages with a one-letter term', async () => {
    await expectSameRefusal(
      org.owner.get('/api/v1/messages/search?q=a'),
      rpc.SearchMessages({ q: 'a', page: 1, limit: 10 }, ctx()),
      'q',
      'must be at least 2 characters',
    );
  });
});
