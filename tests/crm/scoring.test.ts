import { randomUUID } from 'node:crypto';
import { SCORE_ONLY_CONTACT_UPDATE } from '@crm/events';
import { eventually } from '@crm/testing';
import { messageData } from '../support/event-data';
import type { Client } from '../support/http';
import { addUser, CrmStack, listenEvents, Org, publishEvent, startCrmStack } from './crm-support';

// Lead scoring through the gateway: config and rules (roles, validation, other orgs), scores computed from
// real flows (contacts created, tags added, status changed, appointments, message events as messaging
// publishes them), the contact list's filter and sort on them, decay, recomputes after rule and config
// changes, and automation's high_value_lead notification, once per crossing of the org's threshold.
describe('lead scoring', () => {
  let crm: CrmStack;
  let acme: Org;
  let globex: Org;
  let owner: Client;
  let admin: Client;
  let agent: Client;
  let events: Awaited<ReturnType<typeof listenEvents>>;

  beforeAll(async () => {
    crm = await startCrmStack({ services: ['automation'], serviceEnv: { automation: { RUN_POLL_MS: '100' }, crm: { SCORING_TICK_MS: '200' } } });
    // Score announcements go out under their own routing key (a contact.updated all the same).
    events = await listenEvents(crm.exchange, ['contact.updated', SCORE_ONLY_CONTACT_UPDATE]);
    acme = await crm.newOrg('Acme');
    globex = await crm.newOrg('Globex');
    owner = acme.owner;
    admin = (await addUser(crm.api, owner, 'admin')).as;
    agent = (await addUser(crm.api, owner, 'agent')).as;
  });
  afterAll(async () => {
    await events?.close();
    await crm?.stop();
  });

  const settled = (as: Client) => eventually(async () => ((await as.get('/api/v1/scoring/config')).body.recomputing === false ? true : undefined));
  const scoreOf = async (as: Client, id: string) => (await as.get(`/api/v1/contacts/${id}/scores`)).body;
  const waitScore = (as: Client, id: string, total: number) =>
    eventually(async () => {
      const s = await scoreOf(as, id);
      return s.totalScore === total ? s : undefined;
    });
  const message = (org: Org, type: 'message.received' | 'message.sent', contactId: string, extra: Record<string, unknown> = {}) =>
    publishEvent(
      crm.exchange,
      type,
      org.orgId,
      messageData(type, { contactId, content: 'hello', contentType: 'text', sentAt: new Date().toISOString(), ...extra }),
    );
  const rule = async (as: Client, r: Record<string, unknown>) => {
    const res = await as.post('/api/v1/scoring/rules', r);
    if (res.status !== 201) throw new Error(`rule: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const fieldOf = (res: { body: any }) => res.body.error.details?.[0]?.field;

  describe('config', () => {
    it('GET /scoring/config gives the defaults until written; GET /scoring/rules is empty; both need a token', async () => {
      const res = await agent.get('/api/v1/scoring/config');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        orgId: acme.orgId,
        scoringModel: 'weighted',
        baseScore: 0,
        maxScore: 100,
        rules: [],
        decayRate: 0.05,
        decayInterval: 'daily',
        highValueThreshold: 80,
        recomputing: false,
        updatedAt: null,
      });
      expect((await agent.get('/api/v1/scoring/rules')).body).toEqual([]);
      expect((await crm.api.get('/api/v1/scoring/config')).status).toBe(401);
      expect((await crm.api.get('/api/v1/scoring/rules')).status).toBe(401);
    });

    it('PUT /scoring/config changes sent fields (admin and owner only) and validates the whole config', async () => {
      expect((await agent.put('/api/v1/scoring/config', { baseScore: 1 })).status).toBe(403);
      const lead = (await addUser(crm.api, owner, 'team_lead')).as;
      expect((await lead.put('/api/v1/scoring/config', { baseScore: 1 })).status).toBe(403);
      expect((await crm.api.put('/api/v1/scoring/config', { baseScore: 1 })).status).toBe(401);

      const bad: [Record<string, unknown>, string][] = [
        [{ scoringModel: 'linear' }, 'scoringModel'],
        [{ baseScore: 'ten' }, 'baseScore'],
        [{ baseScore: 1.5 }, 'baseScore'],
        [{ baseScore: 120 }, 'baseScore'],
        [{ baseScore: -1 }, 'baseScore'],
        [{ maxScore: 0 }, 'maxScore'],
        [{ maxScore: 50 }, 'maxScore'],
        [{ decayRate: 1 }, 'decayRate'],
        [{ decayRate: -0.1 }, 'decayRate'],
        [{ decayRate: '0.1' }, 'decayRate'],
        [{ decayInterval: 'monthly' }, 'decayInterval'],
        [{ highValueThreshold: 0 }, 'highValueThreshold'],
        [{ highValueThreshold: 101 }, 'highValueThreshold'],
      ];
      for (const [patch, field] of bad) {
        const res = await admin.put('/api/v1/scoring/config', patch);
        expect([res.status, fieldOf(res), patch]).toEqual([400, field, patch]);
      }

      const res = await admin.put('/api/v1/scoring/config', { baseScore: 5, decayRate: 0, decayInterval: 'weekly' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(
        expect.objectContaining({
          baseScore: 5,
          maxScore: 100,
          decayRate: 0,
          decayInterval: 'weekly',
          highValueThreshold: 80,
          updatedAt: expect.any(String),
        }),
      );
      expect((await agent.get('/api/v1/scoring/config')).body).toEqual(
        expect.objectContaining({ baseScore: 5, decayRate: 0, decayInterval: 'weekly' }),
      );
      // Another org still has its own defaults.
      expect((await globex.owner.get('/api/v1/scoring/config')).body).toEqual(
        expect.objectContaining({ orgId: globex.orgId, baseScore: 0, decayRate: 0.05 }),
      );
      await settled(owner);
    });
  });

  describe('rules', () => {
    it('POST/GET/PUT/DELETE /scoring/rules, settings:edit to write, 400 naming the field, 404 for other orgs', async () => {
      expect((await agent.post('/api/v1/scoring/rules', { name: 'x', condition: 'message_received', points: 1 })).status).toBe(403);
      const bad: [Record<string, unknown>, string][] = [
        [{ condition: 'message_received', points: 1 }, 'name'],
        [{ name: 'x', points: 1 }, 'condition'],
        [{ name: 'x', condition: 'appointment_completed', points: 1 }, 'condition'],
        [{ name: 'x', condition: 'website_visit', points: 1 }, 'condition'],
        [{ name: 'x', condition: 'message_received' }, 'points'],
        [{ name: 'x', condition: 'message_received', points: 2.5 }, 'points'],
        [{ name: 'x', condition: 'message_received', points: 5000 }, 'points'],
        [{ name: 'x', condition: 'message_received', points: 1, weight: 11 }, 'weight'],
        [{ name: 'x', condition: 'message_received', points: 1, weight: 'heavy' }, 'weight'],
        [{ name: 'x', condition: 'message_received', points: 1, value: 'vip' }, 'value'],
        [{ name: 'x', condition: 'status_changed', points: 1, value: 'vip' }, 'value'],
      ];
      for (const [body, field] of bad) {
        const res = await admin.post('/api/v1/scoring/rules', body);
        expect([res.status, fieldOf(res), body]).toEqual([400, field, body]);
      }

      const created = await admin.post('/api/v1/scoring/rules', { name: 'VIP tag', condition: 'tag_added', value: ' VIP ', points: 20, weight: 1.5 });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: 'VIP tag',
        condition: 'tag_added',
        value: 'vip',
        points: 20,
        weight: 1.5,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const id = created.body.id;
      expect((await agent.get(`/api/v1/scoring/rules/${id}`)).body).toEqual(created.body);
      expect((await agent.get('/api/v1/scoring/rules')).body).toEqual([created.body]);
      expect((await agent.get('/api/v1/scoring/config')).body.rules).toEqual([{ id, name: 'VIP tag', weight: 1.5, factor: 'tag_added:vip' }]);

      const updated = await owner.put(`/api/v1/scoring/rules/${id}`, { name: 'Any tag', value: null, weight: 1 });
      expect(updated.status).toBe(200);
      expect(updated.body).toEqual(expect.objectContaining({ id, name: 'Any tag', condition: 'tag_added', value: null, points: 20, weight: 1 }));
      expect(fieldOf(await owner.put(`/api/v1/scoring/rules/${id}`, { condition: 'nope' }))).toBe('condition');
      expect((await agent.put(`/api/v1/scoring/rules/${id}`, { points: 1 })).status).toBe(403);

      // Another org's rule, an unknown and a malformed id: 404.
      for (const path of [`/api/v1/scoring/rules/${id}`, `/api/v1/scoring/rules/${randomUUID()}`, '/api/v1/scoring/rules/not-an-id']) {
        expect((await globex.owner.get(path)).status).toBe(404);
        expect((await globex.owner.put(path, { points: 1 })).status).toBe(404);
        expect((await globex.owner.del(path)).status).toBe(404);
      }
      expect((await globex.owner.get('/api/v1/scoring/rules')).body).toEqual([]);

      expect((await agent.del(`/api/v1/scoring/rules/${id}`)).status).toBe(403);
      expect((await admin.del(`/api/v1/scoring/rules/${id}`)).status).toBe(204);
      expect((await admin.get(`/api/v1/scoring/rules/${id}`)).status).toBe(404);
      expect((await admin.del(`/api/v1/scoring/rules/${id}`)).status).toBe(404);
      await settled(owner);
    });
  });

  describe('scores from real flows', () => {
    let hot: string;
    let cold: string;
    const r: Record<string, any> = {};

    beforeAll(async () => {
      // baseScore 5 and no decay (set above), so every expected number follows from the rules below.
      r.created = await rule(owner, { name: 'New contact', condition: 'contact_created', points: 2 });
      r.vip = await rule(owner, { name: 'VIP', condition: 'tag_added', value: 'vip', points: 20 });
      r.anyTag = await rule(owner, { name: 'Tagged', condition: 'tag_added', points: 1 });
      r.customer = await rule(owner, { name: 'Became customer', condition: 'status_changed', value: 'customer', points: 30 });
      r.meeting = await rule(owner, { name: 'Meeting booked', condition: 'appointment_created', points: 10, weight: 1.5 });
      r.inbound = await rule(owner, { name: 'Writes to us', condition: 'message_received', points: 3 });
      r.reply = await rule(owner, { name: 'We replied', condition: 'message_replied', points: 4, weight: 0.5 });
      await settled(owner);
    });

    it('contacts, tags, status changes, appointments and messages make the score, with a breakdown per rule', async () => {
      hot = (await owner.post('/api/v1/contacts', { name: 'Hot Lead', phone: '+84911000001', tags: ['VIP'] })).body.id;
      cold = (await owner.post('/api/v1/contacts', { name: 'Cold Lead', phone: '+84911000002' })).body.id;
      // 5 base + 2 created + 20 vip + 1 tag
      await waitScore(agent, hot, 28);
      await waitScore(agent, cold, 7);

      expect((await owner.put(`/api/v1/contacts/${hot}`, { tags: ['VIP', 'hot'] })).status).toBe(200);
      expect((await owner.put(`/api/v1/contacts/${hot}`, { status: 'customer' })).status).toBe(200);
      expect((await owner.post('/api/v1/appointments', { contactId: hot, title: 'Demo', scheduledAt: '2031-01-01T10:00:00Z' })).status).toBe(201);
      await message(acme, 'message.received', hot);
      await message(acme, 'message.received', hot);
      await message(acme, 'message.sent', hot, { sentByUserId: acme.user.id, source: 'ui' });
      // Sent by automation or a campaign: not a reply.
      await message(acme, 'message.sent', hot, { source: 'automation' });
      // 28 + 1 (hot) + 30 (customer) + 15 (meeting) + 6 (two messages) + 2 (one reply)
      const score = await waitScore(agent, hot, 82);
      expect(score).toEqual({ contactId: hot, totalScore: 82, baseScore: 5, breakdown: expect.any(Array), lastUpdated: expect.any(String) });
      const byRule = Object.fromEntries(score.breakdown.map((b: any) => [b.ruleName, b]));
      expect(byRule).toEqual({
        'Became customer': {
          ruleId: r.customer.id,
          ruleName: 'Became customer',
          condition: 'status_changed',
          value: 'customer',
          occurrences: 1,
          points: 30,
          weight: 1,
          contribution: 30,
        },
        VIP: { ruleId: r.vip.id, ruleName: 'VIP', condition: 'tag_added', value: 'vip', occurrences: 1, points: 20, weight: 1, contribution: 20 },
        'Meeting booked': {
          ruleId: r.meeting.id,
          ruleName: 'Meeting booked',
          condition: 'appointment_created',
          value: null,
          occurrences: 1,
          points: 10,
          weight: 1.5,
          contribution: 15,
        },
        'Writes to us': {
          ruleId: r.inbound.id,
          ruleName: 'Writes to us',
          condition: 'message_received',
          value: null,
          occurrences: 2,
          points: 6,
          weight: 1,
          contribution: 6,
        },
        Tagged: {
          ruleId: r.anyTag.id,
          ruleName: 'Tagged',
          condition: 'tag_added',
          value: null,
          occurrences: 2,
          points: 2,
          weight: 1,
          contribution: 2,
        },
        'New contact': {
          ruleId: r.created.id,
          ruleName: 'New contact',
          condition: 'contact_created',
          value: null,
          occurrences: 1,
          points: 2,
          weight: 1,
          contribution: 2,
        },
        'We replied': {
          ruleId: r.reply.id,
          ruleName: 'We replied',
          condition: 'message_replied',
          value: null,
          occurrences: 1,
          points: 4,
          weight: 0.5,
          contribution: 2,
        },
      });
      // Largest contribution first.
      expect(score.breakdown[0].ruleName).toBe('Became customer');
      expect((await agent.get(`/api/v1/contacts/${hot}`)).body.leadScore).toBe(82);
    });

    it('the contact list filters (scoreMin/scoreMax) and sorts (sortBy=leadScore) on the computed scores', async () => {
      const ids = (q: string) => owner.get(`/api/v1/contacts?${q}`).then((res) => res.body.data.map((c: { id: string }) => c.id));
      expect(await ids('sortBy=leadScore&direction=desc')).toEqual([hot, cold]);
      expect(await ids('sortBy=leadScore&direction=asc')).toEqual([cold, hot]);
      expect(await ids('scoreMin=80')).toEqual([hot]);
      expect(await ids('scoreMin=7&scoreMax=7')).toEqual([cold]);
      expect(await ids('scoreMax=6')).toEqual([]);
      const listed = (await owner.get('/api/v1/contacts?sortBy=leadScore')).body.data;
      expect(listed.map((c: { leadScore: number }) => c.leadScore)).toEqual([82, 7]);
    });

    it('a message event of another org, or for an unknown contact, scores nothing', async () => {
      await message(globex, 'message.received', cold);
      await message(acme, 'message.received', randomUUID());
      // A real message published after them (one queue, taken in order): the score counts only it.
      await message(acme, 'message.received', cold);
      const s = await waitScore(agent, cold, 10);
      expect(s.breakdown.find((b: any) => b.ruleName === 'Writes to us').occurrences).toBe(1);
    });

    it("another org's contact, an unknown or a malformed id is 404 on /contacts/:id/scores", async () => {
      expect((await globex.owner.get(`/api/v1/contacts/${hot}/scores`)).status).toBe(404);
      expect((await owner.get(`/api/v1/contacts/${randomUUID()}/scores`)).status).toBe(404);
      expect((await owner.get('/api/v1/contacts/nope/scores')).status).toBe(404);
      expect((await crm.api.get(`/api/v1/contacts/${hot}/scores`)).status).toBe(401);
    });

    it("changing or deleting a rule recomputes the org's scores over the events already seen", async () => {
      await owner.put(`/api/v1/scoring/rules/${r.inbound.id}`, { points: 10 });
      await settled(owner);
      // Hot: 82 − 6 + 20; cold: 7 + 3 − 3 + 10.
      await waitScore(agent, hot, 96);
      await waitScore(agent, cold, 17);
      await owner.del(`/api/v1/scoring/rules/${r.customer.id}`);
      await settled(owner);
      const s = await waitScore(agent, hot, 66);
      expect(s.breakdown.map((b: any) => b.ruleName)).not.toContain('Became customer');
      // Scores are clamped to maxScore.
      await owner.put(`/api/v1/scoring/rules/${r.vip.id}`, { points: 500 });
      await settled(owner);
      await waitScore(agent, hot, 100);
      await owner.put(`/api/v1/scoring/rules/${r.vip.id}`, { points: 20 });
      await settled(owner);
      await waitScore(agent, hot, 66);
    });

    it('a new baseScore reaches contacts that never had an event scored', async () => {
      const quiet = (await owner.post('/api/v1/contacts', { name: 'Quiet' })).body.id;
      await waitScore(agent, quiet, 7);
      await admin.put('/api/v1/scoring/config', { baseScore: 15 });
      await settled(owner);
      await waitScore(agent, quiet, 17);
      await waitScore(agent, cold, 27);
      await admin.put('/api/v1/scoring/config', { baseScore: 5 });
      await settled(owner);
      await waitScore(agent, quiet, 7);
    });

    it('a contact created while the org has a baseScore starts at it, with no rule counting its creation', async () => {
      // Globex has no rules: a new contact's score is its org's baseScore alone (the one-statement path of a new
      // contact applies only when that is 0).
      await globex.owner.put('/api/v1/scoring/config', { baseScore: 12 });
      await settled(globex.owner);
      const fresh = (await globex.owner.post('/api/v1/contacts', { name: 'Fresh' })).body.id;
      await waitScore(globex.owner, fresh, 12);
      await globex.owner.put('/api/v1/scoring/config', { baseScore: 0 });
      await settled(globex.owner);
      await waitScore(globex.owner, fresh, 0);
      const zero = (await globex.owner.post('/api/v1/contacts', { name: 'Zero' })).body.id;
      expect((await scoreOf(globex.owner, zero)).totalScore).toBe(0);
    });

    it('decay: each event counts at its own age, (1 − decayRate) per decayInterval', async () => {
      const id = (await owner.post('/api/v1/contacts', { name: 'Was Chatty' })).body.id;
      await waitScore(agent, id, 7);
      await admin.put('/api/v1/scoring/config', { decayRate: 0.5, decayInterval: 'daily' });
      await settled(owner);
      // A day ago (worth half of 10) and now (worth 10).
      await message(acme, 'message.received', id, { sentAt: new Date(Date.now() - 86_400_000).toISOString() });
      await message(acme, 'message.received', id);
      // 5 base + 2 created + 15
      const s = await waitScore(agent, id, 22);
      expect(s.breakdown.find((b: any) => b.ruleName === 'Writes to us')).toEqual(
        expect.objectContaining({ occurrences: 2, points: 15, contribution: 15 }),
      );
      await admin.put('/api/v1/scoring/config', { decayRate: 0 });
      await settled(owner);
      await waitScore(agent, id, 27);
    });
  });

  describe('high-value leads', () => {
    it("crossing the org's highValueThreshold raises one high_value_lead notification per crossing, and only crossings and meaningful moves are announced", async () => {
      const initech = await crm.newOrg('Initech');
      const boss = initech.owner;
      // Automation's own HIGH_VALUE_LEAD_SCORE is 80: a notification at 40 can only come from the org's threshold.
      expect((await boss.put('/api/v1/scoring/config', { highValueThreshold: 30, decayRate: 0 })).status).toBe(200);
      await rule(boss, { name: 'Gold', condition: 'tag_added', value: 'gold', points: 40 });
      await rule(boss, { name: 'Lost', condition: 'status_changed', value: 'lost', points: -60 });
      await rule(boss, { name: 'Back', condition: 'status_changed', value: 'lead', points: 60 });
      await rule(boss, { name: 'Writes', condition: 'message_received', points: 5 });
      await settled(boss);
      const id = (await boss.post('/api/v1/contacts', { name: 'Big Fish', phone: '+84911000009' })).body.id;
      const notes = async () =>
        (await boss.get('/api/v1/notifications')).body.data.filter((n: any) => n.type === 'high_value_lead' && n.resourceId === id);

      await boss.put(`/api/v1/contacts/${id}`, { tags: ['gold'] });
      const first = await eventually(async () => ((await notes()).length === 1 ? (await notes())[0] : undefined));
      expect(first).toEqual(expect.objectContaining({ title: 'High-value lead', message: 'Big Fish reached a lead score of 40', resourceId: id }));

      // Still high: more messages and an unrelated change raise no second notification.
      for (let i = 0; i < 3; i++) await message(initech, 'message.received', id);
      await waitScore(boss, id, 55);
      await boss.put(`/api/v1/contacts/${id}`, { name: 'Big Fish Co' });
      // Falls well below the threshold, then crosses it again: a second notification.
      await boss.put(`/api/v1/contacts/${id}`, { status: 'lost' });
      await waitScore(boss, id, 0);
      await boss.put(`/api/v1/contacts/${id}`, { status: 'lead' });
      await waitScore(boss, id, 55);
      const both = await eventually(async () => {
        const n = await notes();
        return n.length >= 2 ? n : undefined;
      });
      expect(both.map((n: any) => n.message).sort()).toEqual(['Big Fish Co reached a lead score of 55', 'Big Fish reached a lead score of 40']);

      // Announced: 40 (crossing), 50 (a tenth of maxScore above 40), 0 (fell), 55 (crossed again); the
      // messages that moved it by 5 were not, nor was the rename (a contact.updated of its own).
      const announced = await eventually(async () => {
        const seen = events.seen.filter((e) => e.type === 'contact.updated' && e.data.contact.id === id && e.data.changes.includes('leadScore'));
        return seen.length === 4 ? seen : undefined;
      });
      expect(announced.map((e) => e.data.contact.leadScore)).toEqual([40, 50, 0, 55]);
      expect(announced.every((e) => e.data.highValueThreshold === 30 && e.data.changes.length === 1 && e.orgId === initech.orgId)).toBe(true);
      expect(await notes()).toHaveLength(2);
    });
  });

  describe('pipeline stages (custom statuses)', () => {
    it("stage_reached scores a contact moved to the org's own stage; the value must be one of the org's custom statuses", async () => {
      const umbrella = await crm.newOrg('Umbrella');
      const boss = umbrella.owner;
      const proposal = (await boss.post('/api/v1/contact-statuses', { name: 'Proposal sent', color: '#ffaa00' })).body.id;
      const demo = (await boss.post('/api/v1/contact-statuses', { name: 'Demo done', color: '#00aaff' })).body.id;
      const theirs = (await globex.owner.post('/api/v1/contact-statuses', { name: 'Theirs', color: '#000000' })).body.id;
      expect([proposal, demo, theirs].every(Boolean)).toBe(true);

      const bad = [
        [{ name: 'x', condition: 'stage_reached', points: 5, value: 'not-an-id' }, 'value'],
        [{ name: 'x', condition: 'stage_reached', points: 5, value: theirs }, 'value'],
        [{ name: 'x', condition: 'stage_reached', points: 5, value: randomUUID() }, 'value'],
      ] as const;
      for (const [body, field] of bad) {
        const res = await boss.post('/api/v1/scoring/rules', body);
        expect(res.status).toBe(400);
        expect(fieldOf(res)).toBe(field);
      }
      await rule(boss, { name: 'Proposal', condition: 'stage_reached', value: proposal.toUpperCase(), points: 25 });
      await rule(boss, { name: 'Any stage', condition: 'stage_reached', points: 5 });
      await rule(boss, { name: 'Became customer', condition: 'status_changed', value: 'customer', points: 40 });
      await settled(boss);

      const id = (await boss.post('/api/v1/contacts', { name: 'Stage Walker', phone: '+84911000099' })).body.id;
      await waitScore(boss, id, 0);
      expect((await boss.put(`/api/v1/contacts/${id}`, { statusId: demo })).status).toBe(200);
      await waitScore(boss, id, 5);
      // Stage and status change in one update: each kind of rule counts it once.
      expect((await boss.put(`/api/v1/contacts/${id}`, { statusId: proposal, status: 'customer' })).status).toBe(200);
      const s = await waitScore(boss, id, 5 + 25 + 5 + 40);
      const byRule = Object.fromEntries(s.breakdown.map((b: any) => [b.ruleName, [b.occurrences, b.contribution]]));
      expect(byRule).toEqual({ Proposal: [1, 25], 'Any stage': [2, 10], 'Became customer': [1, 40] });
    });
  });
});
