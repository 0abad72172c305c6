import { randomUUID } from 'node:crypto';
import { eventually } from '@crm/testing';
import { auditEntries, auditEntryFor } from '../support/audit';
import type { Client } from '../support/http';
import type { Stack } from '../support/stack';
import { inboxFixture, InboxFixture, member } from './inbox-support';

// Macros (issue #29): POST/GET /api/v1/macros, PUT/DELETE /api/v1/macros/:id; shared macros are written by team
// leads and above, personal ones are their owner's alone (404 for anyone else); POST
// /conversations/:id/macros/:macroId/run performs every action in order, a failing one recording its error while
// the next still runs; the bulk endpoint's {action: "macro"}; every run in the audit log.
describe('macros', () => {
  let f: InboxFixture;
  let stack: Stack;
  let connector: InboxFixture['connector'];
  let a: InboxFixture['a'];
  let b: InboxFixture['b'];
  let lead: { api: Client; id: string };
  let agent: { api: Client; id: string };
  let agent2: { api: Client; id: string };
  let conv: Record<string, string>;
  const uids = ['m-1', 'm-2', 'm-3', 'm-4'];

  beforeAll(async () => {
    f = await inboxFixture('macros', uids);
    ({ stack, connector, a, b, conv } = f);
    lead = await member(stack.url, a.owner, 'team_lead', 'macro lead');
    agent = await member(stack.url, a.owner, 'agent', 'macro agent one');
    agent2 = await member(stack.url, a.owner, 'agent', 'macro agent two');
  }, 60_000);
  afterAll(() => f?.stop());

  const fieldOf = (res: { body: any }) => res.body.error?.details?.[0]?.field;
  const create = (as: Client, body: object) => as.post('/api/v1/macros', body);
  const run = (as: Client, conversationId: string, macroId: string) => as.post(`/api/v1/conversations/${conversationId}/macros/${macroId}/run`, {});
  const detail = async (id: string) => (await a.owner.get(`/api/v1/conversations/${id}`)).body.conversation;
  const priorityOnly = [{ type: 'set_priority', priority: 'high' }];

  describe('writing macros', () => {
    it('an agent creates a personal macro (201, every action as written); only they list it', async () => {
      const actions = [
        { type: 'send_message', content: 'Thanks, we are on it' },
        { type: 'add_note', content: 'Escalated by macro' },
        { type: 'assign', assigneeId: null },
        { type: 'set_status', status: 'pending' },
        { type: 'set_priority', priority: null },
        { type: 'add_to_folder', folderId: randomUUID() },
        { type: 'snooze', minutes: 60 },
        { type: 'snooze', snoozedUntil: '2030-01-02T03:04:05+07:00' },
      ];
      const res = await create(agent.api, { name: 'My escalation', shared: false, actions });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(String),
        name: 'My escalation',
        shared: false,
        ownerId: agent.id,
        actions: [
          { type: 'send_message', content: 'Thanks, we are on it', contentType: 'text' },
          actions[1],
          actions[2],
          actions[3],
          actions[4],
          actions[5],
          actions[6],
          { type: 'snooze', snoozedUntil: '2030-01-01T20:04:05.000Z' },
        ],
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const mine = await agent.api.get('/api/v1/macros');
      expect(mine.status).toBe(200);
      expect(mine.body.data.map((m: any) => m.id)).toContain(res.body.id);
      expect((await agent2.api.get('/api/v1/macros')).body.data.map((m: any) => m.id)).not.toContain(res.body.id);
      expect((await a.owner.get('/api/v1/macros')).body.data.map((m: any) => m.id)).not.toContain(res.body.id);
    });

    it('403 for an agent creating a shared macro; a team lead creates it (201) and every user of the org lists it, another org does not', async () => {
      const refused = await create(agent.api, { name: 'Team close', shared: true, actions: priorityOnly });
      expect([refused.status, refused.body.error.code]).toEqual([403, 'permission_denied']);
      const made = await create(lead.api, { name: 'Team close', shared: true, actions: priorityOnly });
      expect(made.status).toBe(201);
      expect(made.body).toEqual(expect.objectContaining({ shared: true, ownerId: lead.id }));
      for (const user of [agent.api, agent2.api, a.owner])
        expect((await user.get('/api/v1/macros')).body.data.map((m: any) => m.id)).toContain(made.body.id);
      expect((await b.owner.get('/api/v1/macros')).body.data).toEqual([]);
      // A shared macro acts for the team: who wrote it is in the audit log.
      const entry = await auditEntryFor(a.owner, 'macro.created', made.body.id);
      expect(entry).toEqual(
        expect.objectContaining({
          actorId: lead.id,
          resourceType: 'macro',
          details: { name: 'Team close', shared: true, actions: ['set_priority'] },
        }),
      );
    });

    it('400 naming the field: name, shared, actions, and each action’s own field as actions[i].field', async () => {
      const base = { name: 'Bad', shared: false };
      const cases: Array<[object, string]> = [
        [{ shared: false, actions: priorityOnly }, 'name'],
        [{ name: 'x', actions: priorityOnly }, 'shared'],
        [{ ...base, actions: [] }, 'actions'],
        [{ ...base, actions: [{ type: 'dance' }] }, 'actions[0].type'],
        [{ ...base, actions: [{ type: 'send_message' }] }, 'actions[0].content'],
        [{ ...base, actions: [{ type: 'send_message', content: 'hi', contentType: 'text plain' }] }, 'actions[0].contentType'],
        [{ ...base, actions: [{ type: 'add_note', content: '   ' }] }, 'actions[0].content'],
        [
          {
            ...base,
            actions: [
              { type: 'set_priority', priority: 'high' },
              { type: 'add_note', content: 'ok' },
              { type: 'assign', assigneeId: 'bob' },
            ],
          },
          'actions[2].assigneeId',
        ],
        [{ ...base, actions: [{ type: 'assign' }] }, 'actions[0].assigneeId'],
        [{ ...base, actions: [{ type: 'assign', assigneeId: null, teamId: 'x' }] }, 'actions[0].teamId'],
        [{ ...base, actions: [{ type: 'set_status', status: 'snoozed' }] }, 'actions[0].status'],
        [{ ...base, actions: [{ type: 'set_priority', priority: 'critical' }] }, 'actions[0].priority'],
        [{ ...base, actions: [{ type: 'set_priority' }] }, 'actions[0].priority'],
        [{ ...base, actions: [{ type: 'add_to_folder', folderId: 'inbox' }] }, 'actions[0].folderId'],
        [{ ...base, actions: [{ type: 'snooze' }] }, 'actions[0].minutes'],
        [{ ...base, actions: [{ type: 'snooze', minutes: 5, snoozedUntil: '2030-01-01T00:00:00Z' }] }, 'actions[0].minutes'],
        [{ ...base, actions: [{ type: 'snooze', minutes: 0 }] }, 'actions[0].minutes'],
        [{ ...base, actions: [{ type: 'snooze', snoozedUntil: 'tomorrow' }] }, 'actions[0].snoozedUntil'],
      ];
      for (const [body, field] of cases) {
        const res = await create(agent.api, body);
        expect([res.status, fieldOf(res), JSON.stringify(body)]).toEqual([400, field, JSON.stringify(body)]);
      }
      const tooMany = await create(agent.api, { ...base, actions: Array.from({ length: 21 }, () => priorityOnly[0]) });
      expect([tooMany.status, fieldOf(tooMany)]).toEqual([400, 'actions']);
    });

    it('PUT changes only the fields sent (actions replaced whole); another user’s personal macro is 404 for PUT, DELETE and run, an admin included', async () => {
      const mine = await create(agent.api, { name: 'Mine', shared: false, actions: priorityOnly });
      const renamed = await agent.api.put(`/api/v1/macros/${mine.body.id}`, { name: 'Mine, renamed' });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toEqual(
        expect.objectContaining({ name: 'Mine, renamed', shared: false, actions: [{ type: 'set_priority', priority: 'high' }] }),
      );
      const replaced = await agent.api.put(`/api/v1/macros/${mine.body.id}`, { actions: [{ type: 'add_note', content: 'n' }] });
      expect(replaced.body.actions).toEqual([{ type: 'add_note', content: 'n' }]);
      const badAction = await agent.api.put(`/api/v1/macros/${mine.body.id}`, {
        actions: [
          { type: 'add_note', content: 'n' },
          { type: 'assign', assigneeId: 'x' },
        ],
      });
      expect([badAction.status, fieldOf(badAction)]).toEqual([400, 'actions[1].assigneeId']);
      // Making it shared is a team lead's call.
      const share = await agent.api.put(`/api/v1/macros/${mine.body.id}`, { shared: true });
      expect(share.status).toBe(403);

      for (const other of [agent2.api, a.owner, lead.api]) {
        expect((await other.put(`/api/v1/macros/${mine.body.id}`, { name: 'stolen' })).status).toBe(404);
        expect((await other.del(`/api/v1/macros/${mine.body.id}`)).status).toBe(404);
        expect((await run(other, conv['m-4'], mine.body.id)).status).toBe(404);
      }
      // Another org's macro, an unknown id and a malformed one are 404 too.
      const theirs = await create(b.owner, { name: 'B shared', shared: true, actions: priorityOnly });
      for (const id of [theirs.body.id, randomUUID(), 'nope']) {
        expect((await a.owner.put(`/api/v1/macros/${id}`, { name: 'x' })).status).toBe(404);
        expect((await a.owner.del(`/api/v1/macros/${id}`)).status).toBe(404);
        expect((await run(a.owner, conv['m-4'], id)).status).toBe(404);
      }
      expect((await agent.api.del(`/api/v1/macros/${mine.body.id}`)).status).toBe(204);
      expect((await agent.api.put(`/api/v1/macros/${mine.body.id}`, { name: 'gone' })).status).toBe(404);
    });

    it('shared macros: agents may not change or delete them (403); a team lead may, and one made personal becomes theirs', async () => {
      const shared = await create(lead.api, { name: 'Shared to edit', shared: true, actions: priorityOnly });
      expect((await agent.api.put(`/api/v1/macros/${shared.body.id}`, { name: 'x' })).status).toBe(403);
      expect((await agent.api.del(`/api/v1/macros/${shared.body.id}`)).status).toBe(403);
      const personal = await a.owner.put(`/api/v1/macros/${shared.body.id}`, { shared: false });
      expect(personal.status).toBe(200);
      expect(personal.body).toEqual(expect.objectContaining({ shared: false, ownerId: a.user.id }));
      expect((await auditEntryFor(a.owner, 'macro.updated', shared.body.id)).details).toEqual({
        name: 'Shared to edit',
        shared: false,
        sharedFrom: true,
      });
      expect((await lead.api.put(`/api/v1/macros/${shared.body.id}`, { name: 'y' })).status).toBe(404);
      expect((await a.owner.del(`/api/v1/macros/${shared.body.id}`)).status).toBe(204);
    });

    it('GET /macros pages as the house does ({data, pagination}), by name; shared=true|false narrows it', async () => {
      for (const name of ['Zeta', 'Alpha', 'Mu']) await create(agent2.api, { name, shared: false, actions: priorityOnly });
      const first = await agent2.api.get('/api/v1/macros?shared=false&limit=2');
      expect(first.status).toBe(200);
      expect(first.body.data.map((m: any) => m.name)).toEqual(['Alpha', 'Mu']);
      expect(first.body.pagination).toEqual({ total: 3, page: 1, limit: 2, pages: 2 });
      expect((await agent2.api.get('/api/v1/macros?shared=false&limit=2&page=2')).body.data.map((m: any) => m.name)).toEqual(['Zeta']);
      const shared = (await agent2.api.get('/api/v1/macros?shared=true&limit=100')).body.data;
      expect(shared.length).toBeGreaterThan(0);
      expect(shared.every((m: any) => m.shared)).toBe(true);
      const bad = await agent2.api.get('/api/v1/macros?shared=maybe');
      expect([bad.status, fieldOf(bad)]).toEqual([400, 'shared']);
    });
  });

  describe('running macros', () => {
    it('runs every action in order as the caller: a failing one records its error and the next still runs; the run is audited', async () => {
      const folder = await a.owner.post('/api/v1/chat/folders', { name: 'Escalations' });
      const deletedFolder = await a.owner.post('/api/v1/chat/folders', { name: 'Gone soon' });
      await a.owner.del(`/api/v1/chat/folders/${deletedFolder.body.id}`);
      const macro = await create(agent.api, {
        name: 'Escalate',
        shared: false,
        actions: [
          { type: 'set_priority', priority: 'urgent' },
          // An agent may not hand a conversation to someone else: forbidden, as PUT /assignee answers.
          { type: 'assign', assigneeId: agent2.id },
          { type: 'add_note', content: 'Escalated: customer waiting' },
          { type: 'add_to_folder', folderId: deletedFolder.body.id },
          { type: 'add_to_folder', folderId: folder.body.id },
          { type: 'send_message', content: 'We are on it' },
          { type: 'assign', assigneeId: agent.id },
          { type: 'snooze', minutes: 30 },
        ],
      });
      expect(macro.status).toBe(201);
      const id = conv['m-1'];
      const res = await run(agent.api, id, macro.body.id);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        results: [
          { type: 'set_priority', ok: true, error: null },
          { type: 'assign', ok: false, error: { code: 'permission_denied', message: expect.any(String) } },
          { type: 'add_note', ok: true, error: null },
          { type: 'add_to_folder', ok: false, error: { code: 'not_found', message: 'Chat folder not found' } },
          { type: 'add_to_folder', ok: true, error: null },
          { type: 'send_message', ok: true, error: null },
          { type: 'assign', ok: true, error: null },
          { type: 'snooze', ok: true, error: null },
        ],
      });
      const after = await detail(id);
      expect(after).toEqual(expect.objectContaining({ priority: 'urgent', assigneeId: agent.id, status: 'snoozed', folderIds: [folder.body.id] }));
      expect(new Date(after.snoozedUntil).getTime()).toBeGreaterThan(Date.now() + 29 * 60_000);
      expect((await a.owner.get(`/api/v1/conversations/${id}/notes`)).body.data.map((n: any) => n.content)).toEqual(['Escalated: customer waiting']);
      expect(connector.sent.filter((s) => s.content === 'We are on it')).toHaveLength(1);

      const entry = await auditEntryFor(a.owner, 'macro.run', id);
      expect(entry).toEqual(expect.objectContaining({ actorId: agent.id, actorType: 'user', resourceType: 'conversation', resourceId: id }));
      expect(entry.details).toEqual({
        macroId: macro.body.id,
        macroName: 'Escalate',
        results: [
          { type: 'set_priority', ok: true },
          { type: 'assign', ok: false, code: 'permission_denied' },
          { type: 'add_note', ok: true },
          { type: 'add_to_folder', ok: false, code: 'not_found' },
          { type: 'add_to_folder', ok: true },
          { type: 'send_message', ok: true },
          { type: 'assign', ok: true },
          { type: 'snooze', ok: true },
        ],
      });
    });

    it('an agent runs a shared macro; 404 for another org’s conversation, an unknown or malformed one', async () => {
      const shared = await create(lead.api, {
        name: 'Pending + low',
        shared: true,
        actions: [
          { type: 'set_status', status: 'pending' },
          { type: 'set_priority', priority: 'low' },
        ],
      });
      const ok = await run(agent2.api, conv['m-2'], shared.body.id);
      expect(ok.status).toBe(200);
      expect(ok.body.results.map((r: any) => r.ok)).toEqual([true, true]);
      expect(await detail(conv['m-2'])).toEqual(expect.objectContaining({ status: 'pending', priority: 'low' }));
      for (const id of [conv.b, randomUUID(), 'not-an-id']) {
        const res = await run(a.owner, id, shared.body.id);
        expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
      }
      expect((await b.owner.get(`/api/v1/conversations/${conv.b}`)).body.conversation.status).toBe('active');
    });

    it('bulk {action: "macro"}: the macro runs on each conversation; failures per id; one audit entry per run and one for the request', async () => {
      const macro = await create(lead.api, {
        name: 'Bulk high + note',
        shared: true,
        actions: [
          { type: 'set_priority', priority: 'high' },
          { type: 'add_note', content: 'bulk note' },
        ],
      });
      const ids = [conv['m-3'], conv['m-4']];
      const res = await a.owner.post('/api/v1/conversations/bulk', { action: 'macro', macroId: macro.body.id, ids: [...ids, conv.b, 'nope'] });
      expect(res.status).toBe(200);
      expect(res.body.updated).toBe(2);
      expect([...res.body.failed].sort((x: any, y: any) => x.id.localeCompare(y.id))).toEqual(
        [
          { id: conv.b, code: 'not_found' },
          { id: 'nope', code: 'not_found' },
        ].sort((x, y) => x.id.localeCompare(y.id)),
      );
      for (const id of ids) {
        expect((await detail(id)).priority).toBe('high');
        expect((await a.owner.get(`/api/v1/conversations/${id}/notes`)).body.data.map((n: any) => n.content)).toEqual(['bulk note']);
        const entry = await auditEntryFor(a.owner, 'macro.run', id);
        expect(entry.details).toEqual(expect.objectContaining({ macroId: macro.body.id, bulk: true }));
      }
      const request = await eventually(async () => (await auditEntries(a.owner, 'conversations.bulk_macro'))[0], 15_000, 100);
      expect(request.details).toEqual(
        expect.objectContaining({ requested: 4, updated: 2, failed: 2, params: { macroId: macro.body.id, macroName: 'Bulk high + note' } }),
      );
      expect([...request.details.ids].sort()).toEqual([...ids].sort());

      // A conversation where an action failed is listed with that action's code; the others still ran there.
      const failing = await create(agent.api, {
        name: 'Give away',
        shared: false,
        actions: [
          { type: 'assign', assigneeId: agent2.id },
          { type: 'set_priority', priority: 'medium' },
        ],
      });
      const partial = await agent.api.post('/api/v1/conversations/bulk', { action: 'macro', macroId: failing.body.id, ids: [conv['m-3']] });
      expect(partial.body).toEqual({ updated: 0, failed: [{ id: conv['m-3'], code: 'forbidden' }] });
      expect((await detail(conv['m-3'])).priority).toBe('medium');
    });

    it('bulk macro: 400 naming macroId when it is missing, malformed, or a macro the caller cannot run', async () => {
      const personal = await create(agent2.api, { name: 'Not yours', shared: false, actions: priorityOnly });
      const cases: object[] = [{}, { macroId: 'x' }, { macroId: randomUUID() }, { macroId: personal.body.id }];
      for (const extra of cases) {
        const res = await agent.api.post('/api/v1/conversations/bulk', { action: 'macro', ids: [conv['m-3']], ...extra });
        expect([res.status, fieldOf(res)]).toEqual([400, 'macroId']);
      }
    });
  });
});
