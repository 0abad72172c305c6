import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { eventually } from '@crm/testing';
import { auditEntryFor } from '../support/audit';
import { client, type Client, newOrg } from '../support/http';
import { startStack, type Stack } from '../support/stack';
import { eventBus } from '../messaging/support';
import { addUser, listenEvents } from './crm-support';
import { connectPatiently } from '../support/patient-client';

// Issue #15 item 5: POST /api/v1/contacts/:id/merge {sourceId} folds a duplicate into a contact, through the whole
// stack (gateway, crm, messaging): notes, appointments, tags, fields and conversations move to the target, the source
// answers 404, contact.merged is published. POST /api/v1/contacts/merges/:mergeId/undo puts both back within 30 days.
describe('contact merge and undo', () => {
  let stack: Stack;
  let api: Client;
  let owner: Client;
  let globex: Client;
  let orgId: string;
  let lead: Awaited<ReturnType<typeof addUser>>;
  let agent: Awaited<ReturnType<typeof addUser>>;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let contactEvents: Awaited<ReturnType<typeof listenEvents>>;
  const dir = mkdtempSync(path.join(tmpdir(), 'crm-merge-'));
  const account = randomUUID();

  const SOURCE_PHONE = '+84901000002';
  let target: string;
  let source: string;
  let targetConv: string;
  let sourceConv: string;
  let sourceBefore: any;
  let targetBefore: any;
  let mergeId: string;

  const detail = async (id: string) => (await owner.get(`/api/v1/contacts/${id}`)).body;
  const fieldOf = (res: { body: any }) => res.body.error?.details?.[0]?.field;
  const merge = (as: Client, targetId: string, body: object) => as.post(`/api/v1/contacts/${targetId}/merge`, body);
  const undo = (as: Client, id: string) => as.post(`/api/v1/contacts/merges/${id}/undo`);
  /** A contact made by an inbound chat message (so it has a conversation); returns its id and the conversation's. */
  const chatContact = async (uid: string, name: string) => {
    await bus.inbound(orgId, { accountId: account, fromUid: uid, fromName: name, content: `hi from ${name}` });
    const conv = await eventually(async () =>
      (await owner.get(`/api/v1/conversations?search=${encodeURIComponent(name)}`)).body.data.find((c: any) => c.contactId),
    );
    return { contactId: conv.contactId as string, conversationId: conv.id as string };
  };
  const plainContact = async (as: Client, body: object) => {
    const res = await as.post('/api/v1/contacts', body);
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  /** The contact fields a merge and its undo must leave exactly as they were (the detail without its lists). */
  const fieldsOf = (d: any) => {
    const { notes: _n, appointments: _a, activities: _act, conversations: _c, friends: _f, ...rest } = d;
    return rest;
  };

  beforeAll(async () => {
    stack = await startStack({ services: ['crm', 'messaging'], serviceEnv: { messaging: { ATTACHMENTS_DIR: dir } } });
    api = client(stack.url);
    const acme = await newOrg(api, 'Merge Acme');
    owner = acme.owner;
    orgId = acme.user.orgId;
    globex = (await newOrg(api, 'Merge Globex')).owner;
    lead = await addUser(api, owner, 'team_lead');
    agent = await addUser(api, owner, 'agent');
    bus = await eventBus(stack);
    contactEvents = await listenEvents(stack.env.EVENTS_EXCHANGE, ['contact.merged', 'contact.merge_undone', 'appointment.updated']);

    ({ contactId: target, conversationId: targetConv } = await chatContact('uid-merge-target', 'Tam Target'));
    ({ contactId: source, conversationId: sourceConv } = await chatContact('uid-merge-source', 'Son Source'));
    expect((await owner.put(`/api/v1/contacts/${target}`, { tags: ['vip'] })).status).toBe(200);
    expect(
      (
        await owner.put(`/api/v1/contacts/${source}`, {
          email: 'son@example.com',
          phone: SOURCE_PHONE,
          tags: ['VIP', 'saigon'],
          notes: 'met at the fair',
        })
      ).status,
    ).toBe(200);
    for (const [id, who] of [
      [target, 'target'],
      [source, 'source'],
    ]) {
      expect((await owner.post(`/api/v1/contacts/${id}/notes`, { content: `note of the ${who}` })).status).toBe(201);
      expect((await owner.post('/api/v1/appointments', { contactId: id, title: `visit ${who}`, scheduledAt: '2030-01-02T03:00:00Z' })).status).toBe(
        201,
      );
    }
    // The contact details read conversations from messaging: wait until both show theirs.
    await eventually(
      async () => ((await detail(source)).conversations.length === 1 && (await detail(target)).conversations.length === 1) || undefined,
    );
    sourceBefore = await detail(source);
    targetBefore = await detail(target);
  }, 90_000);
  afterAll(async () => {
    await contactEvents?.close();
    await bus?.close();
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the duplicate phone is refused with a 409 naming the other contact (why merging exists)', async () => {
    const res = await owner.put(`/api/v1/contacts/${target}`, { phone: SOURCE_PHONE });
    expect(res.status).toBe(409);
    expect(res.body.error.details[0].message).toContain(source);
  });

  it('POST /contacts/:id/merge moves everything to the target, fills its empty fields, and the source is gone', async () => {
    const res = await merge(lead.as, target, { sourceId: source });
    expect(res.status).toBe(200);
    mergeId = res.body.id;
    expect(res.body).toEqual(
      expect.objectContaining({
        targetId: target,
        sourceId: source,
        mergedBy: lead.id,
        undoneAt: null,
        source: null,
        moved: expect.objectContaining({ notes: 1, appointments: 1 }),
      }),
    );
    expect(Date.parse(res.body.undoableUntil) - Date.parse(res.body.mergedAt)).toBe(30 * 24 * 3600 * 1000);
    expect([...res.body.filledFields].sort()).toEqual(['email', 'notes', 'phone', 'tags']);
    // The target's own values win (name, the "vip" spelling); empty ones come from the source.
    expect(res.body.target).toEqual(
      expect.objectContaining({
        id: target,
        name: 'Tam Target',
        email: 'son@example.com',
        phone: SOURCE_PHONE,
        tags: ['vip', 'saigon'],
        notes: 'met at the fair',
      }),
    );

    expect((await owner.get(`/api/v1/contacts/${source}`)).status).toBe(404);
    expect((await owner.put(`/api/v1/contacts/${source}`, { name: 'x' })).status).toBe(404);
    const list = await owner.get('/api/v1/contacts?limit=100');
    expect(list.body.data.map((c: any) => c.id)).not.toContain(source);
    expect(list.body.pagination.total).toBe(list.body.data.length);
    expect((await owner.get(`/api/v1/contacts?search=${encodeURIComponent('son@example.com')}`)).body.data.map((c: any) => c.id)).toEqual([target]);

    const d = await detail(target);
    expect(d.notes.map((n: any) => n.content).sort()).toEqual(['note of the source', 'note of the target']);
    expect(d.appointments.map((a: any) => a.title).sort()).toEqual(['visit source', 'visit target']);
    expect(d.activities[0]).toEqual(expect.objectContaining({ type: 'merged' }));
    const appts = (await owner.get(`/api/v1/appointments?contactId=${target}`)).body.data;
    expect(appts.map((a: any) => a.contactName)).toEqual(['Tam Target', 'Tam Target']);
  });

  it('messaging relinks the source’s conversations to the target; contact.merged, appointment.updated and the audit entry say so', async () => {
    await eventually(async () => (await owner.get(`/api/v1/conversations/${sourceConv}`)).body.conversation.contactId === target || undefined);
    const conv = (await owner.get(`/api/v1/conversations/${sourceConv}`)).body.conversation;
    expect(conv).toEqual(expect.objectContaining({ contactId: target, contactName: 'Tam Target' }));
    await eventually(async () => (await detail(target)).conversations.length === 2 || undefined);
    expect((await detail(target)).conversations.map((c: any) => c.id).sort()).toEqual([targetConv, sourceConv].sort());

    const event = await eventually(async () => contactEvents.find((e) => e.type === 'contact.merged' && e.data.mergeId === mergeId));
    expect(event).toEqual(expect.objectContaining({ orgId, data: expect.objectContaining({ targetId: target, sourceId: source }) }));
    expect(event.data.source).toEqual(expect.objectContaining({ id: source, phone: SOURCE_PHONE }));
    const moved = sourceBefore.appointments[0].id;
    await eventually(async () =>
      contactEvents.find((e) => e.type === 'appointment.updated' && e.data.appointment.id === moved && e.data.appointment.contactId === target),
    );
    const entry = await auditEntryFor(owner, 'contact.merged', target);
    expect(entry).toEqual(expect.objectContaining({ actorId: lead.id, details: expect.objectContaining({ mergeId, sourceId: source }) }));
  });

  it('after the merge the phone belongs to the target: a new contact with it is a 409 naming the target', async () => {
    const res = await owner.post('/api/v1/contacts', { name: 'Copy', phone: SOURCE_PHONE });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('duplicate_phone');
    expect(res.body.error.details[0].message).toContain(target);
  });

  it('POST /contacts/merges/:mergeId/undo restores both exactly; rows added to the target since stay with it', async () => {
    expect((await owner.post(`/api/v1/contacts/${target}/notes`, { content: 'written after the merge' })).status).toBe(201);
    const res = await undo(lead.as, mergeId);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expect.objectContaining({ id: mergeId, undoneAt: expect.any(String) }));
    expect(res.body.source).toEqual(expect.objectContaining({ id: source, phone: SOURCE_PHONE }));

    const s = await detail(source);
    expect(fieldsOf(s)).toEqual(fieldsOf(sourceBefore));
    expect(s.notes).toEqual(sourceBefore.notes);
    expect(s.appointments).toEqual(sourceBefore.appointments);
    const t = await detail(target);
    expect({ ...fieldsOf(t), updatedAt: null }).toEqual({ ...fieldsOf(targetBefore), updatedAt: null });
    expect(t.notes.map((n: any) => n.content).sort()).toEqual(['note of the target', 'written after the merge']);
    expect(t.appointments).toEqual(targetBefore.appointments);
    expect((await owner.get('/api/v1/contacts?limit=100')).body.data.map((c: any) => c.id)).toEqual(expect.arrayContaining([source, target]));

    await eventually(async () => (await owner.get(`/api/v1/conversations/${sourceConv}`)).body.conversation.contactId === source || undefined);
    expect((await owner.get(`/api/v1/conversations/${sourceConv}`)).body.conversation).toEqual(
      expect.objectContaining({ contactName: 'Son Source' }),
    );
    expect((await owner.get(`/api/v1/conversations/${targetConv}`)).body.conversation.contactId).toBe(target);
    const event = await eventually(async () => contactEvents.find((e) => e.type === 'contact.merge_undone' && e.data.mergeId === mergeId));
    expect(event.data).toEqual(expect.objectContaining({ targetId: target, sourceId: source }));
    await auditEntryFor(owner, 'contact.merge_undone', target);
  });

  it('a second undo is a 409 merge_already_undone', async () => {
    const res = await undo(lead.as, mergeId);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('merge_already_undone');
  });

  it('a merged-away phone never blocks a new contact once the target keeps its own', async () => {
    const keeper = await plainContact(owner, { name: 'Keeper', phone: '+84901000010' });
    const dup = await plainContact(owner, { name: 'Dup', phone: '+84901000011' });
    expect((await merge(owner, keeper, { sourceId: dup })).status).toBe(200);
    expect((await owner.post('/api/v1/contacts', { name: 'New owner of the number', phone: '+84901000011' })).status).toBe(201);
    // Undo would bring back a second contact with that number: refused, naming who has it now.
    const id = await eventually(
      async () =>
        (await owner.get(`/api/v1/audit-log?action=contact.merged&limit=100`)).body.data.find((e: any) => e.details.sourceId === dup)?.details
          .mergeId,
    );
    const res = await undo(owner, id);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('merge_undo_conflict');
    expect(fieldOf(res)).toBe('phone');
    expect((await owner.get(`/api/v1/contacts/${dup}`)).status).toBe(404);
  });

  it('undo after 30 days is a 409 merge_undo_expired', async () => {
    const a = await plainContact(owner, { name: 'Old A' });
    const b = await plainContact(owner, { name: 'Old B' });
    const id = (await merge(owner, a, { sourceId: b })).body.id;
    const db = await connectPatiently(stack.databaseUrl('crm'));
    try {
      await db.query("UPDATE contact_merges SET merged_at = now() - interval '31 days' WHERE id = $1", [id]);
    } finally {
      await db.end();
    }
    const res = await undo(owner, id);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('merge_undo_expired');
    expect((await owner.get(`/api/v1/contacts/${b}`)).status).toBe(404);
  });

  it('undo while the target was merged into another contact since is a 409 merge_target_merged', async () => {
    const [a, b, c] = [
      await plainContact(owner, { name: 'Chain A' }),
      await plainContact(owner, { name: 'Chain B' }),
      await plainContact(owner, { name: 'Chain C' }),
    ];
    const first = (await merge(owner, b, { sourceId: a })).body.id;
    const second = (await merge(owner, c, { sourceId: b })).body.id;
    const res = await undo(owner, first);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('merge_target_merged');
    expect(res.body.error.message).toContain(second);
    expect((await undo(owner, second)).status).toBe(200);
    expect((await undo(owner, first)).status).toBe(200);
    for (const id of [a, b, c]) expect((await owner.get(`/api/v1/contacts/${id}`)).status).toBe(200);
  });

  describe('analytics follow the merge (the read model has no foreign keys to carry them)', () => {
    let crmDb: PgClient;
    const today = new Date().toISOString().slice(0, 10);
    const funnelNew = async () =>
      (await owner.get(`/api/v1/analytics/conversion-funnel?dateFrom=${today}&dateTo=${today}`)).body.stages[0].count as number;
    const analyticsOf = async (id: string) => {
      const row = (
        await crmDb.query(
          'SELECT reached_lead, reached_customer, converted_by, converted_at, deleted FROM analytics_contacts WHERE contact_id = $1',
          [id],
        )
      ).rows[0];
      const assigned = (await crmDb.query('SELECT user_id, at, credited FROM analytics_assignments WHERE contact_id = $1 ORDER BY user_id', [id]))
        .rows;
      return { row, assigned };
    };
    beforeAll(async () => {
      crmDb = await connectPatiently(stack.databaseUrl('crm'));
    });
    afterAll(() => crmDb?.end());

    it('merge: the source’s stages, conversion and assignments join the target’s, the source leaves the counts; undo: both as they were', async () => {
      const t = await plainContact(owner, { name: 'Analytics Target', status: 'lead', assignedUserId: lead.id, dealValue: 100 });
      const s = await plainContact(owner, { name: 'Analytics Source', status: 'customer', assignedUserId: agent.id, dealValue: 500 });
      // The read model is fed by contact.created: wait until both contacts are in it.
      await eventually(async () => ((await analyticsOf(t)).row && (await analyticsOf(s)).row?.reached_customer) || undefined);
      const [tBefore, sBefore, newBefore] = [await analyticsOf(t), await analyticsOf(s), await funnelNew()];
      expect(sBefore.row).toEqual(expect.objectContaining({ converted_by: agent.id, deleted: false }));

      const res = await merge(owner, t, { sourceId: s });
      expect(res.status).toBe(200);
      const tAfter = await analyticsOf(t);
      expect(tAfter.row).toEqual({
        reached_lead: true,
        reached_customer: true,
        converted_by: agent.id,
        converted_at: sBefore.row.converted_at,
        deleted: false,
      });
      expect(tAfter.assigned.map((a: any) => [a.user_id, a.credited]).sort()).toEqual(
        [
          [agent.id, true],
          [lead.id, false],
        ].sort(),
      );
      expect((await analyticsOf(s)).row.deleted).toBe(true);
      expect((await analyticsOf(s)).assigned).toEqual([]);
      // The person is counted once: one contact fewer created today; the conversion now the target's (its deal value).
      expect(await funnelNew()).toBe(newBefore - 1);
      const team = (await owner.get(`/api/v1/analytics/team-performance?dateFrom=${today}&dateTo=${today}`)).body.team;
      expect(team.find((m: any) => m.userId === agent.id)).toEqual(expect.objectContaining({ contactsAssigned: 1, revenueGenerated: 100 }));

      expect((await undo(owner, res.body.id)).status).toBe(200);
      expect(await analyticsOf(s)).toEqual(sBefore);
      expect(await analyticsOf(t)).toEqual(tBefore);
      expect(await funnelNew()).toBe(newBefore);
      const back = (await owner.get(`/api/v1/analytics/team-performance?dateFrom=${today}&dateTo=${today}`)).body.team;
      expect(back.find((m: any) => m.userId === agent.id)).toEqual(expect.objectContaining({ contactsAssigned: 1, revenueGenerated: 500 }));
    });
  });

  describe('refusals', () => {
    let x: string;
    let y: string;
    let foreign: string;
    beforeAll(async () => {
      x = await plainContact(owner, { name: 'Refused X' });
      y = await plainContact(owner, { name: 'Refused Y' });
      foreign = await plainContact(globex, { name: 'Globex contact' });
    });

    it('400 naming sourceId: missing, malformed, or the contact itself', async () => {
      for (const body of [{}, { sourceId: '' }, { sourceId: 'nope' }, { sourceId: x }, { sourceId: 42 }]) {
        const res = await merge(owner, x, body);
        expect([JSON.stringify(body), res.status, fieldOf(res)]).toEqual([JSON.stringify(body), 400, 'sourceId']);
      }
    });

    it('403 for agents, on merge and undo; nothing changes', async () => {
      const res = await merge(agent.as, x, { sourceId: y });
      expect(res.status).toBe(403);
      expect((await owner.get(`/api/v1/contacts/${y}`)).status).toBe(200);
      expect((await undo(agent.as, mergeId)).status).toBe(403);
    });

    it('401 without a token', async () => {
      expect((await api.post(`/api/v1/contacts/${x}/merge`, { sourceId: y })).status).toBe(401);
      expect((await api.post(`/api/v1/contacts/merges/${mergeId}/undo`)).status).toBe(401);
    });

    it("404 for another org's or an unknown contact or merge", async () => {
      expect((await merge(owner, x, { sourceId: foreign })).status).toBe(404);
      expect((await merge(owner, foreign, { sourceId: x })).status).toBe(404);
      expect((await merge(globex, foreign, { sourceId: x })).status).toBe(404);
      expect((await merge(owner, randomUUID(), { sourceId: x })).status).toBe(404);
      expect((await merge(owner, 'nope', { sourceId: x })).status).toBe(404);
      expect((await undo(globex, mergeId)).status).toBe(404);
      expect((await undo(owner, randomUUID())).status).toBe(404);
      expect((await undo(owner, 'nope')).status).toBe(404);
      for (const id of [x, y]) expect((await owner.get(`/api/v1/contacts/${id}`)).status).toBe(200);
      expect((await globex.get(`/api/v1/contacts/${foreign}`)).status).toBe(200);
    });
  });

  it('the OpenAPI document describes both routes and the webhook events', async () => {
    const doc = (await api.get('/openapi.json')).body;
    expect(doc.paths['/api/v1/contacts/{id}/merge'].post).toBeDefined();
    expect(doc.paths['/api/v1/contacts/merges/{mergeId}/undo'].post).toBeDefined();
    expect(JSON.stringify(doc)).toContain('contact.merge_undone');
  });
});
