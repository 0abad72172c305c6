import { randomUUID } from 'node:crypto';
import { eventually } from '@crm/testing';
import { fakeConversations } from '../support/fake-conversations';
import { client } from '../support/http';
import { addUser, CrmStack, listenEvents, Org, publishEvent, startCrmStack } from './crm-support';

// Tasks (issue #26 item 6): CRUD through the gateway against crm (identity for assignees, messaging faked for
// conversations: tests/support/fake-conversations.ts), the contact timeline, inbox visibility, the task.* events and the due timer.
describe('tasks', () => {
  let crm: CrmStack;
  let messaging: Awaited<ReturnType<typeof fakeConversations>>;
  let acme: Org;
  let other: Org;
  let agent: Awaited<ReturnType<typeof addUser>>;
  let agent2: Awaited<ReturnType<typeof addUser>>;
  let lead: Awaited<ReturnType<typeof addUser>>;
  let events: Awaited<ReturnType<typeof listenEvents>>;
  let contactId: string;
  let otherContactId: string;
  let conversationId: string;
  let otherOrgConversationId: string;

  const at = (msFromNow: number) => new Date(Date.now() + msFromNow).toISOString();
  const conversation = (orgId: string, c: Parameters<typeof messaging.add>[1] = {}) => messaging.add(orgId, c);
  const fieldOf = (res: { body: any }) => res.body.error.details[0].field;

  beforeAll(async () => {
    messaging = await fakeConversations();
    crm = await startCrmStack({ serviceEnv: { crm: { MESSAGING_ADDR: messaging.addr } } });
    events = await listenEvents(crm.exchange, ['task.*']);
    acme = await crm.newOrg('Tasks Acme');
    other = await crm.newOrg('Tasks Other');
    agent = await addUser(crm.api, acme.owner, 'agent');
    agent2 = await addUser(crm.api, acme.owner, 'agent');
    lead = await addUser(crm.api, acme.owner, 'team_lead');
    contactId = (await acme.owner.post('/api/v1/contacts', { name: 'Tia Task' })).body.id;
    otherContactId = (await other.owner.post('/api/v1/contacts', { name: 'Elsewhere' })).body.id;
    conversationId = conversation(acme.orgId, { contactId });
    otherOrgConversationId = conversation(other.orgId);
  }, 90_000);
  afterAll(async () => {
    await events?.close();
    await crm?.stop();
    await messaging?.stop();
  });

  describe('POST /api/v1/tasks', () => {
    it('creates an open task (201) with every field, announces task.created and puts it on the contact’s timeline', async () => {
      const dueAt = at(3_600_000);
      const res = await acme.owner.post('/api/v1/tasks', {
        title: '  Call back about the quote ',
        notes: 'ask for the PO',
        dueAt,
        assigneeId: agent.id,
        contactId,
        conversationId,
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(String),
        title: 'Call back about the quote',
        notes: 'ask for the PO',
        dueAt: new Date(dueAt).toISOString(),
        status: 'open',
        assigneeId: agent.id,
        contactId,
        conversationId,
        createdBy: acme.user.id,
        createdAt: expect.any(String),
        completedAt: null,
      });
      expect((await acme.owner.get(`/api/v1/tasks/${res.body.id}`)).body).toEqual(res.body);
      const ev = await eventually(async () => events.find((e) => e.type === 'task.created' && e.data.task.id === res.body.id));
      expect(ev.orgId).toBe(acme.orgId);
      expect(ev.data.task).toEqual(res.body);
      const detail = await acme.owner.get(`/api/v1/contacts/${contactId}`);
      expect(detail.body.activities).toEqual(
        expect.arrayContaining([expect.objectContaining({ type: 'task_created', data: expect.stringContaining('Call back about the quote') })]),
      );
    });

    it('needs only a title; the rest is null', async () => {
      const res = await agent.as.post('/api/v1/tasks', { title: 'Tidy the pipeline' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual(
        expect.objectContaining({
          title: 'Tidy the pipeline',
          notes: null,
          dueAt: null,
          status: 'open',
          assigneeId: null,
          contactId: null,
          conversationId: null,
          createdBy: agent.id,
          completedAt: null,
        }),
      );
    });

    it('is 400 naming the field for a missing or blank title, a bad time, malformed ids or an assignee who is not a user of the org', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{}, 'title'],
        [{ title: '   ' }, 'title'],
        [{ title: 'x'.repeat(201) }, 'title'],
        [{ title: 'T', notes: 'n'.repeat(4001) }, 'notes'],
        [{ title: 'T', dueAt: 'tomorrow' }, 'dueAt'],
        [{ title: 'T', assigneeId: 'bob' }, 'assigneeId'],
        [{ title: 'T', contactId: 'nope' }, 'contactId'],
        [{ title: 'T', conversationId: 42 }, 'conversationId'],
        // Well-formed, but not a user of this organization (crm asks identity).
        [{ title: 'T', assigneeId: randomUUID() }, 'assigneeId'],
        [{ title: 'T', assigneeId: other.user.id }, 'assigneeId'],
      ];
      for (const [body, field] of cases) {
        const res = await acme.owner.post('/api/v1/tasks', body);
        expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), 400]);
        expect(fieldOf(res)).toBe(field);
      }
    });

    it('is 404 for a contact or conversation of another org (or none at all), 401 without a token', async () => {
      for (const body of [{ contactId: otherContactId }, { contactId: randomUUID() }]) {
        const res = await acme.owner.post('/api/v1/tasks', { title: 'T', ...body });
        expect(res.status).toBe(404);
        expect(res.body.error.message).toBe('Contact not found');
      }
      for (const body of [{ conversationId: otherOrgConversationId }, { conversationId: randomUUID() }]) {
        const res = await acme.owner.post('/api/v1/tasks', { title: 'T', ...body });
        expect(res.status).toBe(404);
        expect(res.body.error.message).toBe('Conversation not found');
      }
      expect((await client(crm.stack.url).post('/api/v1/tasks', { title: 'T' })).status).toBe(401);
    });
  });

  describe('GET /api/v1/tasks', () => {
    let ids: Record<'soon' | 'later' | 'undated' | 'lead' | 'done', string>;
    let listContact: string;

    beforeAll(async () => {
      listContact = (await acme.owner.post('/api/v1/contacts', { name: 'List Contact' })).body.id;
      const make = async (body: Record<string, unknown>) => {
        const res = await acme.owner.post('/api/v1/tasks', { contactId: listContact, ...body });
        expect(res.status).toBe(201);
        return res.body.id as string;
      };
      // Written out of order: the list orders them.
      ids = {
        undated: await make({ title: 'undated', assigneeId: agent2.id }),
        later: await make({ title: 'later', dueAt: at(7_200_000), assigneeId: agent2.id }),
        soon: await make({ title: 'soon', dueAt: at(1_800_000), assigneeId: agent2.id }),
        lead: await make({ title: 'for the lead', dueAt: at(2_700_000), assigneeId: lead.id }),
        done: await make({ title: 'done one', dueAt: at(900_000), assigneeId: agent2.id }),
      };
      expect((await acme.owner.put(`/api/v1/tasks/${ids.done}`, { status: 'done' })).status).toBe(200);
    });

    const titles = (res: { body: any }) => res.body.data.map((t: any) => t.title);

    it('lists soonest due first, undated last, with pagination', async () => {
      const res = await acme.owner.get(`/api/v1/tasks?contactId=${listContact}`);
      expect(res.status).toBe(200);
      expect(titles(res)).toEqual(['done one', 'soon', 'for the lead', 'later', 'undated']);
      expect(res.body.pagination).toEqual({ total: 5, page: 1, limit: 50, pages: 1 });
      const page2 = await acme.owner.get(`/api/v1/tasks?contactId=${listContact}&limit=2&page=2`);
      expect(titles(page2)).toEqual(['for the lead', 'later']);
      expect(page2.body.pagination).toEqual({ total: 5, page: 2, limit: 2, pages: 3 });
    });

    it('filters by assignee (an id, or me), status, contact, conversation and dueBefore', async () => {
      expect(titles(await acme.owner.get(`/api/v1/tasks?contactId=${listContact}&assigneeId=${agent2.id}&status=open`))).toEqual([
        'soon',
        'later',
        'undated',
      ]);
      expect(titles(await acme.owner.get(`/api/v1/tasks?contactId=${listContact}&status=done`))).toEqual(['done one']);
      expect(titles(await lead.as.get(`/api/v1/tasks?assigneeId=me`))).toEqual(['for the lead']);
      expect(titles(await acme.owner.get(`/api/v1/tasks?contactId=${listContact}&dueBefore=${encodeURIComponent(at(3_000_000))}`))).toEqual([
        'done one',
        'soon',
        'for the lead',
      ]);
      const byConversation = await acme.owner.get(`/api/v1/tasks?conversationId=${conversationId}`);
      expect(byConversation.body.data.length).toBeGreaterThan(0);
      expect(byConversation.body.data.every((t: any) => t.conversationId === conversationId)).toBe(true);
    });

    it('never lists another org’s tasks', async () => {
      const mine = await other.owner.post('/api/v1/tasks', { title: 'other org task' });
      expect(mine.status).toBe(201);
      const all = await acme.owner.get('/api/v1/tasks?limit=100');
      expect(all.body.data.map((t: any) => t.id)).not.toContain(mine.body.id);
      expect((await other.owner.get('/api/v1/tasks')).body.data.map((t: any) => t.title)).toEqual(['other org task']);
    });

    it('is 400 naming the parameter for a bad filter or page', async () => {
      for (const [q, field] of [
        ['status=closed', 'status'],
        ['assigneeId=you', 'assigneeId'],
        ['contactId=x', 'contactId'],
        ['conversationId=x', 'conversationId'],
        ['dueBefore=soon', 'dueBefore'],
        ['page=abc', 'page'],
      ]) {
        const res = await acme.owner.get(`/api/v1/tasks?${q}`);
        expect([q, res.status]).toEqual([q, 400]);
        expect(fieldOf(res)).toBe(field);
      }
      expect((await client(crm.stack.url).get('/api/v1/tasks')).status).toBe(401);
    });
  });

  describe('GET, PUT, DELETE /api/v1/tasks/:id', () => {
    let id: string;
    beforeEach(async () => {
      id = (await acme.owner.post('/api/v1/tasks', { title: 'Follow up', contactId, dueAt: at(3_600_000), assigneeId: agent.id })).body.id;
    });

    it('done sets completedAt (task.completed, timeline), open clears it', async () => {
      const done = await acme.owner.put(`/api/v1/tasks/${id}`, { status: 'done' });
      expect(done.status).toBe(200);
      expect(done.body.status).toBe('done');
      expect(Date.parse(done.body.completedAt)).toBeGreaterThan(Date.now() - 60_000);
      const ev = await eventually(async () => events.find((e) => e.type === 'task.completed' && e.data.task.id === id));
      expect(ev.data.task).toEqual(done.body);
      const detail = await acme.owner.get(`/api/v1/contacts/${contactId}`);
      expect(detail.body.activities).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'task_completed', data: 'Follow up' })]));
      // Done again keeps the first completion time.
      expect((await acme.owner.put(`/api/v1/tasks/${id}`, { status: 'done' })).body.completedAt).toBe(done.body.completedAt);

      const reopened = await acme.owner.put(`/api/v1/tasks/${id}`, { status: 'open' });
      expect(reopened.status).toBe(200);
      expect(reopened.body).toEqual(expect.objectContaining({ status: 'open', completedAt: null }));
    });

    it('changes only what is sent; null clears the due time and references', async () => {
      const res = await acme.owner.put(`/api/v1/tasks/${id}`, {
        title: 'Follow up twice',
        notes: 'n',
        dueAt: null,
        assigneeId: null,
        contactId: null,
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(
        expect.objectContaining({ id, title: 'Follow up twice', notes: 'n', dueAt: null, assigneeId: null, contactId: null, status: 'open' }),
      );
      const moved = await acme.owner.put(`/api/v1/tasks/${id}`, { assigneeId: agent2.id, conversationId });
      expect(moved.body).toEqual(expect.objectContaining({ title: 'Follow up twice', assigneeId: agent2.id, conversationId }));
    });

    it('PUT is 400 naming the field, 404 for unknown references', async () => {
      for (const [body, field] of [
        [{ status: 'closed' }, 'status'],
        [{ title: '' }, 'title'],
        [{ dueAt: 'later' }, 'dueAt'],
        [{ assigneeId: randomUUID() }, 'assigneeId'],
      ] as const) {
        const res = await acme.owner.put(`/api/v1/tasks/${id}`, body);
        expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), 400]);
        expect(fieldOf(res)).toBe(field);
      }
      expect((await acme.owner.put(`/api/v1/tasks/${id}`, { contactId: otherContactId })).status).toBe(404);
      expect((await acme.owner.put(`/api/v1/tasks/${id}`, { conversationId: otherOrgConversationId })).status).toBe(404);
      expect((await acme.owner.get(`/api/v1/tasks/${id}`)).body.title).toBe('Follow up');
    });

    it('another org’s task, an unknown and a malformed id are 404 for GET, PUT and DELETE; nothing changes', async () => {
      for (const target of [id, randomUUID(), 'not-an-id']) {
        expect((await other.owner.get(`/api/v1/tasks/${target}`)).status).toBe(404);
        expect((await other.owner.put(`/api/v1/tasks/${target}`, { status: 'done' })).status).toBe(404);
        expect((await other.owner.del(`/api/v1/tasks/${target}`)).status).toBe(404);
      }
      expect((await acme.owner.get(`/api/v1/tasks/${id}`)).body.status).toBe('open');
    });

    it('DELETE is 204, then the task is gone (404)', async () => {
      expect((await agent.as.del(`/api/v1/tasks/${id}`)).status).toBe(204);
      expect((await acme.owner.get(`/api/v1/tasks/${id}`)).status).toBe(404);
      expect((await acme.owner.del(`/api/v1/tasks/${id}`)).status).toBe(404);
    });
  });

  describe('under "assigned" inbox visibility', () => {
    const emit = (type: string, data: unknown) => publishEvent(crm.exchange, type, acme.orgId, data);
    let visibleConversation: string;
    let hiddenConversation: string;
    let t: Record<'mine' | 'byMe' | 'onVisible' | 'onHidden' | 'theirs', string>;

    beforeAll(async () => {
      const account = randomUUID();
      visibleConversation = conversation(acme.orgId, { contactId, assigneeId: agent.id });
      hiddenConversation = conversation(acme.orgId, { contactId, assigneeId: agent2.id, hiddenFrom: [agent.id] });
      await emit('conversation.created', { id: visibleConversation, contactId, chatnetAccountId: account, type: 'user', threadId: 'v' });
      await emit('conversation.assigned', {
        conversationId: visibleConversation,
        contactId,
        chatnetAccountId: account,
        assigneeId: agent.id,
        teamId: null,
        previousAssigneeId: null,
        assignedBy: null,
      });
      await emit('conversation.created', { id: hiddenConversation, contactId, chatnetAccountId: account, type: 'user', threadId: 'h' });
      await emit('conversation.assigned', {
        conversationId: hiddenConversation,
        contactId,
        chatnetAccountId: account,
        assigneeId: agent2.id,
        teamId: null,
        previousAssigneeId: null,
        assignedBy: null,
      });
      const make = async (as: typeof acme.owner, body: Record<string, unknown>) =>
        (await as.post('/api/v1/tasks', { title: 'vis', ...body })).body.id as string;
      t = {
        mine: await make(acme.owner, { assigneeId: agent.id }),
        byMe: await make(agent.as, { assigneeId: agent2.id }),
        onVisible: await make(acme.owner, { conversationId: visibleConversation, assigneeId: agent2.id }),
        onHidden: await make(acme.owner, { conversationId: hiddenConversation, assigneeId: agent2.id }),
        theirs: await make(acme.owner, { assigneeId: agent2.id }),
      };
      await emit('inbox_settings.updated', { agentVisibility: 'assigned' });
      // crm applies the events above in order: once the hidden task is gone from the agent's view, all are in.
      await eventually(async () => ((await agent.as.get(`/api/v1/tasks/${t.theirs}`)).status === 404 ? true : undefined));
      await eventually(async () => ((await agent.as.get(`/api/v1/tasks/${t.onVisible}`)).status === 200 ? true : undefined));
    });
    afterAll(() => emit('inbox_settings.updated', { agentVisibility: 'all' }));

    it('an agent sees their own tasks, the ones they created and those on conversations they can see', async () => {
      for (const id of [t.mine, t.byMe, t.onVisible]) expect((await agent.as.get(`/api/v1/tasks/${id}`)).status).toBe(200);
      const listed = (await agent.as.get('/api/v1/tasks?limit=100')).body.data.map((x: any) => x.id);
      expect(listed).toEqual(expect.arrayContaining([t.mine, t.byMe, t.onVisible]));
      expect(listed).not.toContain(t.onHidden);
      expect(listed).not.toContain(t.theirs);
    });

    it('others’ tasks are 404 for GET, PUT and DELETE, and unchanged', async () => {
      for (const id of [t.onHidden, t.theirs]) {
        expect((await agent.as.get(`/api/v1/tasks/${id}`)).status).toBe(404);
        expect((await agent.as.put(`/api/v1/tasks/${id}`, { status: 'done' })).status).toBe(404);
        expect((await agent.as.del(`/api/v1/tasks/${id}`)).status).toBe(404);
        expect((await acme.owner.get(`/api/v1/tasks/${id}`)).body.status).toBe('open');
      }
    });

    it('an agent cannot put a task on a conversation hidden from them (404); a team lead sees every task', async () => {
      const res = await agent.as.post('/api/v1/tasks', { title: 'sneaky', conversationId: hiddenConversation });
      expect(res.status).toBe(404);
      expect(res.body.error.message).toBe('Conversation not found');
      for (const id of Object.values(t)) expect((await lead.as.get(`/api/v1/tasks/${id}`)).status).toBe(200);
    });
  });

  it('a contact merge moves the source’s tasks to the target (with their timeline); undo moves them back', async () => {
    const source = (await acme.owner.post('/api/v1/contacts', { name: 'Merge Source' })).body.id;
    const target = (await acme.owner.post('/api/v1/contacts', { name: 'Merge Target' })).body.id;
    const task = (await acme.owner.post('/api/v1/tasks', { title: 'Survives the merge', contactId: source })).body.id;
    const merged = await acme.owner.post(`/api/v1/contacts/${target}/merge`, { sourceId: source });
    expect(merged.status).toBe(200);
    expect((await acme.owner.get(`/api/v1/tasks/${task}`)).body.contactId).toBe(target);
    expect((await acme.owner.get(`/api/v1/tasks?contactId=${target}`)).body.data.map((t: any) => t.id)).toEqual([task]);
    expect((await acme.owner.post(`/api/v1/contacts/merges/${merged.body.id}/undo`)).status).toBe(200);
    expect((await acme.owner.get(`/api/v1/tasks/${task}`)).body.contactId).toBe(source);
  });

  it('raises task.due within 2 s of the due time, once, and not for a task completed before it', async () => {
    // Due in 4 s: the three requests below end before it even on a loaded machine (at 1.5 s the completion could come
    // after the due time).
    const dueAt = at(4000);
    const due = (await acme.owner.post('/api/v1/tasks', { title: 'Due soon', dueAt, assigneeId: agent.id })).body.id;
    const skipped = (await acme.owner.post('/api/v1/tasks', { title: 'Done early', dueAt, assigneeId: agent.id })).body.id;
    expect((await acme.owner.put(`/api/v1/tasks/${skipped}`, { status: 'done' })).status).toBe(200);
    // The marker: a task due a second later. Its task.due is raised after the timer has passed the first due time,
    // and comes through crm's outbox after whatever that time raised, so once it is here a second task.due of the
    // first, or one of the completed task, would be here too.
    const marker = (await acme.owner.post('/api/v1/tasks', { title: 'Marker', dueAt: at(5000), assigneeId: agent.id })).body.id;
    const ev = await eventually(async () => events.find((e) => e.type === 'task.due' && e.data.task.id === due), 12_000, 20);
    // Measured when the timer raised it (the event's occurredAt), not when this process read it off the broker: the
    // 2 s are the timer's promise, and on a loaded machine the way to this listener can take a while of its own.
    const raised = Date.parse(ev.occurredAt);
    expect(raised - Date.parse(dueAt)).toBeLessThan(2000);
    expect(raised).toBeGreaterThanOrEqual(Date.parse(dueAt));
    expect(ev.data.task).toEqual(expect.objectContaining({ id: due, status: 'open', assigneeId: agent.id, dueAt: new Date(dueAt).toISOString() }));
    await eventually(async () => events.find((e) => e.type === 'task.due' && e.data.task.id === marker), 12_000, 20);
    expect(events.seen.filter((e) => e.type === 'task.due' && e.data.task.id === due)).toHaveLength(1);
    expect(events.seen.filter((e) => e.type === 'task.due' && e.data.task.id === skipped)).toEqual([]);
  });
});
