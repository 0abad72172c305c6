import { randomUUID } from 'node:crypto';
import { eventually } from '@crm/testing';
import type { Client } from '../support/http';
import type { Stack } from '../support/stack';
import { inboxFixture, InboxFixture, member } from './inbox-support';

// Conversation priority (issue #29): PUT /api/v1/conversations/:id/priority with low, medium, high, urgent or null;
// every conversation shape shows it; the list filters on it (priority=) and sorts by it (sortBy=priority: urgent
// first, then high, medium, low, none); a change publishes conversation.priority_changed, a repeat publishes nothing.
describe('conversation priority', () => {
  let f: InboxFixture;
  let stack: Stack;
  let bus: InboxFixture['bus'];
  let a: InboxFixture['a'];
  let b: InboxFixture['b'];
  let agent: { api: Client; id: string };
  let accountA: string;
  let conv: Record<string, string>;
  const uids = ['p-1', 'p-2', 'p-3', 'p-4', 'p-5'];

  beforeAll(async () => {
    f = await inboxFixture('priority', uids);
    ({ stack, bus, a, b, conv, accountA } = f);
    agent = await member(stack.url, a.owner, 'agent', 'priority agent');
  }, 60_000);
  afterAll(() => f?.stop());

  const setPriority = (as: Client, id: string, body: object) => as.put(`/api/v1/conversations/${id}/priority`, body);
  const fieldOf = (res: { body: any }) => res.body.error?.details?.[0]?.field;
  const priorityEvents = (id: string) => bus.of('conversation.priority_changed').filter((e) => e.data.conversationId === id);

  it('PUT priority urgent → 200 with the conversation; the list and the detail show it; conversation.priority_changed says who and from what', async () => {
    const res = await setPriority(agent.api, conv['p-1'], { priority: 'urgent' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expect.objectContaining({ id: conv['p-1'], priority: 'urgent', status: 'active' }));
    expect((await a.owner.get(`/api/v1/conversations/${conv['p-1']}`)).body.conversation.priority).toBe('urgent');
    const row = (await a.owner.get('/api/v1/conversations?limit=100')).body.data.find((c: any) => c.id === conv['p-1']);
    expect(row.priority).toBe('urgent');
    // Conversations never given one show null.
    expect((await a.owner.get(`/api/v1/conversations/${conv['p-2']}`)).body.conversation.priority).toBeNull();

    const event = await eventually(async () => priorityEvents(conv['p-1'])[0]);
    expect(event.orgId).toBe(a.orgId);
    expect(event.data).toEqual({
      conversationId: conv['p-1'],
      contactId: res.body.contactId,
      chatnetAccountId: accountA,
      assigneeId: null,
      priority: 'urgent',
      previousPriority: null,
      changedBy: agent.id,
    });
  });

  it('the same priority again changes nothing and publishes nothing; null clears it (previousPriority said)', async () => {
    expect((await setPriority(a.owner, conv['p-1'], { priority: 'urgent' })).status).toBe(200);
    const cleared = await setPriority(a.owner, conv['p-1'], { priority: null });
    expect([cleared.status, cleared.body.priority]).toEqual([200, null]);
    const events = await eventually(async () => {
      const found = priorityEvents(conv['p-1']);
      return found.length === 2 ? found : undefined;
    });
    expect(events.map((e) => [e.data.priority, e.data.previousPriority])).toEqual([
      ['urgent', null],
      [null, 'urgent'],
    ]);
  });

  it('400 naming priority for a missing or unknown value; 404 for another org’s, an unknown or a malformed conversation', async () => {
    const missing = await setPriority(a.owner, conv['p-2'], {});
    expect([missing.status, fieldOf(missing)]).toEqual([400, 'priority']);
    const unknown = await setPriority(a.owner, conv['p-2'], { priority: 'critical' });
    expect([unknown.status, fieldOf(unknown)]).toEqual([400, 'priority']);
    expect(unknown.body.error.details[0].message).toContain('urgent');
    const wrongType = await setPriority(a.owner, conv['p-2'], { priority: 3 });
    expect([wrongType.status, fieldOf(wrongType)]).toEqual([400, 'priority']);

    for (const id of [conv.b, randomUUID(), 'not-an-id']) {
      const res = await setPriority(a.owner, id, { priority: 'high' });
      expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
    }
    expect((await b.owner.get(`/api/v1/conversations/${conv.b}`)).body.conversation.priority).toBeNull();
  });

  it('list: priority= filters (none: without one); sortBy=priority puts urgent, high, medium, low, then none (newest first within each)', async () => {
    await setPriority(a.owner, conv['p-1'], { priority: 'low' });
    await setPriority(a.owner, conv['p-2'], { priority: 'urgent' });
    await setPriority(a.owner, conv['p-3'], { priority: 'medium' });
    await setPriority(a.owner, conv['p-4'], { priority: 'high' });
    await setPriority(a.owner, conv['p-5'], { priority: null });

    const list = async (q: string) => {
      const res = await a.owner.get(`/api/v1/conversations?${q}`);
      expect(res.status).toBe(200);
      return res.body as { data: any[]; pagination: any };
    };
    const urgent = await list('priority=urgent');
    expect(urgent.data.map((c) => c.id)).toEqual([conv['p-2']]);
    expect(urgent.pagination).toEqual(expect.objectContaining({ total: 1 }));
    expect((await list('priority=none')).data.map((c) => c.threadId)).toEqual(['p-5']);

    const sorted = await list('sortBy=priority');
    expect(sorted.data.map((c) => [c.threadId, c.priority])).toEqual([
      ['p-2', 'urgent'],
      ['p-4', 'high'],
      ['p-3', 'medium'],
      ['p-1', 'low'],
      ['p-5', null],
    ]);
    // Ascending: low first; still nothing-set last.
    expect((await list('sortBy=priority&direction=asc')).data.map((c) => c.threadId)).toEqual(['p-1', 'p-3', 'p-4', 'p-2', 'p-5']);
    // Pages follow the same order.
    const second = await list('sortBy=priority&limit=2&page=2');
    expect(second.data.map((c) => c.threadId)).toEqual(['p-3', 'p-1']);
    expect(second.pagination).toEqual({ total: 5, page: 2, limit: 2, pages: 3 });
    // Ties within a priority: the newest message first.
    await setPriority(a.owner, conv['p-5'], { priority: 'urgent' });
    expect((await list('sortBy=priority&limit=2')).data.map((c) => c.threadId)).toEqual(['p-5', 'p-2']);

    const bad = await a.owner.get('/api/v1/conversations?priority=critical');
    expect([bad.status, fieldOf(bad)]).toEqual([400, 'priority']);
    const badSort = await a.owner.get('/api/v1/conversations?sortBy=importance');
    expect([badSort.status, fieldOf(badSort)]).toEqual([400, 'sortBy']);
  });

  it('another org sees none of it: its list filtered by priority is empty', async () => {
    const res = await b.owner.get('/api/v1/conversations?priority=urgent');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
  });
});
