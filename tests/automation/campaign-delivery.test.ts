import { randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { eventually } from '@crm/testing';
import type { Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { fakeCampaignMessaging, fakeCrmLists, SendCall } from './campaign-fakes';
import { campaignLeases } from './campaign-leases';
import { eventBus, member, org } from './support';
import { connectPatiently } from '../support/patient-client';

// How campaigns send: paced at CAMPAIGN_SEND_PER_MINUTE (300 here: one send every 200 ms), never twice to
// anyone across a restart of the automation service mid-send or a lost answer from messaging, stopped by
// a pause, and held back per chat-network account by messaging's 429 Retry-After while other accounts go on.
// A read receipt that overtakes the record of its send still counts.
describe('campaign delivery', () => {
  const INTERVAL_MS = 200;
  let crm: Awaited<ReturnType<typeof fakeCrmLists>>;
  let messaging: Awaited<ReturnType<typeof fakeCampaignMessaging>>;
  let stack: Stack;
  let db: PgClient;
  let leases: ReturnType<typeof campaignLeases>;
  let lead: Client;
  let orgId: string;
  let templateId: string;

  beforeAll(async () => {
    crm = await fakeCrmLists();
    messaging = await fakeCampaignMessaging();
    stack = await startStack({
      services: ['automation'],
      serviceEnv: {
        automation: {
          CRM_ADDR: crm.addr,
          MESSAGING_ADDR: messaging.addr,
          CAMPAIGN_POLL_MS: '100',
          CAMPAIGN_SEND_PER_MINUTE: String(60_000 / INTERVAL_MS),
          // Events retried every second (nine attempts), so a receipt waiting for its send is retried soon.
          EVENT_RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1s,1s,1s',
        },
      },
    });
    db = await connectPatiently(stack.databaseUrl('automation'));
    leases = campaignLeases(db);
    const a = await org(stack, 'Acme');
    orgId = a.orgId;
    lead = (await member(stack, a.owner, 'team_lead')).api;
    templateId = (await lead.post('/api/v1/automation/templates', { name: 'Hello', content: 'Xin chào {{name}}!' })).body.id;
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await stack?.stop();
    await crm?.stop();
    await messaging?.stop();
  });

  /** A list of n contacts, each with a conversation (on the account given per index, else a new one). */
  function listOf(n: number, account?: (i: number) => string) {
    const l = crm.list(orgId, n, `List ${randomUUID().slice(0, 6)}`);
    l.members.forEach((m, i) => messaging.converse(orgId, m.id, account?.(i)));
    return l;
  }

  async function launch(listId: string, name: string) {
    const created = await lead.post('/api/v1/campaigns', { name, listId, templateId });
    expect(created.status).toBe(201);
    expect((await lead.post(`/api/v1/campaigns/${created.body.id}/activate`)).status).toBe(200);
    return created.body.id as string;
  }

  async function completed(id: string, timeoutMs = 20_000) {
    return eventually(
      async () => {
        const c = (await lead.get(`/api/v1/campaigns/${id}`)).body;
        return c.status === 'completed' ? c : undefined;
      },
      timeoutMs,
      100,
    );
  }

  const callsTo = (members: Array<{ id: string }>) => {
    const convs = new Set(members.map((m) => messaging.conversationOf(orgId, m.id)!.id));
    return messaging.calls.filter((c) => convs.has(c.conversationId));
  };

  /** Per recipient: how many messages really went out (one per distinct clientMessageId that took effect). */
  const deliveredPer = (members: Array<{ id: string }>) =>
    members.map((m) => messaging.delivered().filter((d) => d.conversationId === messaging.conversationOf(orgId, m.id)!.id).length);

  it('sends one message every interval, and a restart of automation mid-send sends nobody twice', async () => {
    const list = listOf(30);
    const id = await launch(list.id, 'Restart me');
    await eventually(async () => callsTo(list.members).length >= 8, 15_000, 20);
    await stack.restart('automation');
    const before = callsTo(list.members).length;
    expect(before).toBeLessThan(30);

    const done = await completed(id);
    expect(done.counts).toEqual({ total: 30, sent: 30, failed: 0, skipped: 0, pending: 0, replied: 0, cancelled: 0, seen: 0 });
    const calls = callsTo(list.members);
    // Exactly one SendMessage per contact: the restart neither lost nor repeated a send.
    expect(calls).toHaveLength(30);
    expect(calls.every((c) => c.outcome === 'sent')).toBe(true);
    expect(deliveredPer(list.members)).toEqual(Array(30).fill(1));
    // Paced, across the restart too (the next send time is kept in the database): never a burst, and
    // 30 sends take at least 29 intervals. Arrival times at the fake include the gRPC trip, which jitters
    // by tens of ms on a busy machine (a restart is busy), so a gap may read short of the interval; a
    // burst would read as a few ms.
    const gaps = calls.slice(1).map((c, i) => c.at - calls[i].at);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(INTERVAL_MS / 4);
    expect(calls[29].at - calls[0].at).toBeGreaterThanOrEqual(29 * INTERVAL_MS - 50);
  }, 30_000);

  it('a pause stops sending after the message in flight; activating again resumes where it stopped', async () => {
    const list = listOf(12);
    const id = await launch(list.id, 'Pause me');
    await eventually(async () => callsTo(list.members).length >= 3, 10_000, 20);
    const paused = await lead.post(`/api/v1/campaigns/${id}/pause`);
    expect(paused.status).toBe(200);
    expect(paused.body.status).toBe('paused');
    const atPause = callsTo(list.members).length;
    // The turn that was sending is over: what it sent is all it will send.
    await leases.released(id);
    const whilePaused = callsTo(list.members).length;
    expect(whilePaused).toBeLessThanOrEqual(atPause + 1);
    // And a later claim passed the paused campaign by.
    await leases.passedOver([id], () => launch(listOf(1).id, 'Marker'));
    expect(callsTo(list.members)).toHaveLength(whilePaused);
    const detail = (await lead.get(`/api/v1/campaigns/${id}`)).body;
    expect(detail.counts.pending).toBe(12 - whilePaused);

    expect((await lead.post(`/api/v1/campaigns/${id}/activate`)).body.status).toBe('active');
    const done = await completed(id);
    expect(done.counts.sent).toBe(12);
    expect(callsTo(list.members)).toHaveLength(12);
    expect(deliveredPer(list.members)).toEqual(Array(12).fill(1));
  }, 20_000);

  it("messaging's 429 holds that account until Retry-After while another account keeps sending", async () => {
    const limited = randomUUID();
    const free = randomUUID();
    // Two sends per second on the limited account; contacts alternate between the accounts.
    messaging.limit(limited, 2, 1_000);
    const list = listOf(12, (i) => (i % 2 === 0 ? limited : free));
    const id = await launch(list.id, 'Rate limited');
    const done = await completed(id);
    expect(done.counts).toEqual({ total: 12, sent: 12, failed: 0, skipped: 0, pending: 0, replied: 0, cancelled: 0, seen: 0 });
    expect(deliveredPer(list.members)).toEqual(Array(12).fill(1));

    const calls = callsTo(list.members);
    const onLimited = calls.filter((c) => c.accountId === limited);
    const refusals = onLimited.filter((c) => c.outcome === 'rate_limited');
    expect(refusals.length).toBeGreaterThanOrEqual(1);
    // After each 429 (Retry-After 1 s), nothing more was tried on that account for that second.
    for (const r of refusals) {
      const next = onLimited.find((c) => c.at > r.at);
      expect(next!.at - r.at).toBeGreaterThanOrEqual(1_000 - 50);
    }
    // Meanwhile the other account's recipients were not held up: they were all done before the limited ones.
    const lastFree = Math.max(...calls.filter((c) => c.accountId === free).map((c) => c.at));
    const lastLimited = Math.max(...onLimited.filter((c: SendCall) => c.outcome === 'sent').map((c) => c.at));
    expect(lastFree).toBeLessThan(lastLimited);
  }, 25_000);

  it('a lost answer from messaging is retried with the same clientMessageId: the recipient gets one message', async () => {
    const list = listOf(4);
    messaging.loseAnswers(2);
    const id = await launch(list.id, 'Lost answers');
    const done = await completed(id);
    expect(done.counts.sent).toBe(4);
    const calls = callsTo(list.members);
    expect(calls.filter((c) => c.outcome === 'lost')).toHaveLength(2);
    expect(calls.filter((c) => c.outcome === 'replayed')).toHaveLength(2);
    expect(deliveredPer(list.members)).toEqual([1, 1, 1, 1]);
    const recipients = (await lead.get(`/api/v1/campaigns/${id}/recipients`)).body.data;
    expect(recipients.every((r: any) => r.status === 'sent')).toBe(true);
  }, 20_000);

  it('a read receipt for a message whose send is not recorded yet is retried until it is, then counted once', async () => {
    const bus = await eventBus(stack);
    try {
      const list = listOf(1);
      const contact = list.members[0];
      const conv = messaging.conversationOf(orgId, contact.id)!;
      // The message goes out but its answer is lost, and the retry (which records it) is slow: meanwhile the
      // recipient reads it and messaging announces message.seen for it.
      messaging.loseAnswers(1);
      const id = await launch(list.id, 'Seen early');
      const lost = await eventually(async () => callsTo(list.members).find((c) => c.outcome === 'lost'), 15_000, 20);
      messaging.slowSends(1500);
      // This fake answers a repeated clientMessageId with that id as the message id: the id the send will record.
      const messageId = lost.clientMessageId;
      expect((await lead.get(`/api/v1/campaigns/${id}/recipients`)).body.data[0].status).toBe('pending');
      const seenAt = new Date().toISOString();
      await bus.publish('message.seen', orgId, {
        messageIds: [messageId],
        conversationId: conv.id,
        contactId: contact.id,
        chatnetAccountId: conv.accountId,
        assigneeId: null,
        seenAt,
        messages: [{ id: messageId, source: 'campaign', sentAt: new Date(lost.at).toISOString() }],
      });
      const done = await completed(id);
      messaging.slowSends(0);
      expect(done.counts.sent).toBe(1);
      const seen = await eventually(
        async () => {
          const c = (await lead.get(`/api/v1/campaigns/${id}`)).body;
          return c.counts.seen === 1 ? c : undefined;
        },
        15_000,
        100,
      );
      expect(seen.openRate).toBe(1);
      const [rec] = (await lead.get(`/api/v1/campaigns/${id}/recipients`)).body.data;
      expect(rec).toEqual(expect.objectContaining({ status: 'sent', messageId, seenAt }));
    } finally {
      messaging.slowSends(0);
      await bus.close();
    }
  }, 30_000);
});
