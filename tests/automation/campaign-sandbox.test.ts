import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from '@crm/testing';
import type { Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { eventBus, org } from './support';

// The Done-when of campaigns, with nothing faked but the chat network's far end (the sandbox driver):
// contacts and conversations made by inbound sandbox messages (connector → messaging → crm), a crm
// customer list selecting 1,000 of them by criteria, a campaign sent through messaging's one send
// pipeline and the connector's live session, automation restarted mid-send. Counted at the network:
// every member with a conversation gets exactly one message, nobody outside the list gets any. Then some
// recipients open their chat (the sandbox network's read receipts): openRate is exactly seen / sent, and a
// receipt delivered again counts once.
//
// Every service runs in this one test process, so the real path moves ~20-60 messages a second here; the
// default list has 200 members to keep the suite's time. CAMPAIGN_E2E_CONTACTS=1000 runs the same test
// at the scale (about 100 s on the 2-core machine under load).
const MEMBERS = Math.max(50, Number(process.env.CAMPAIGN_E2E_CONTACTS) || 200);

describe(`a campaign to a ${MEMBERS}-contact list over the sandbox chat network`, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'campaign-e2e-'));
  const WALK_INS = 10;
  const CHATTING = MEMBERS - WALK_INS;
  const EXCLUDED = 3;
  /** The sandbox keeps the last 200 messages sent per account: at most 150 contacts per account are counted exactly. */
  const ACCOUNTS = Math.ceil((CHATTING + EXCLUDED) / 150);
  let stack: Stack;
  let owner: Client;
  const accounts: string[] = [];
  const t0 = Date.now();
  const mark = (what: string) => process.env.CAMPAIGN_TIMING && process.stdout.write(`${what}: ${Date.now() - t0} ms\n`);

  beforeAll(async () => {
    stack = await startStack({
      services: ['crm', 'chatnet-connector', 'messaging', 'automation'],
      serviceEnv: {
        // Budgets a test can finish within; the defaults (3 campaign sends per 10 s) are covered elsewhere.
        messaging: { ATTACHMENTS_DIR: dir, SEND_LIMITS: 'total=100000/day,1000/1s;campaign=100000/day,1000/1s' },
        'chatnet-connector': { HEARTBEAT_MS: '500', SCAN_INTERVAL_MS: '500' },
        automation: { CAMPAIGN_POLL_MS: '100', CAMPAIGN_SEND_PER_MINUTE: '12000' },
      },
    });
    owner = (await org(stack, 'Shop')).owner;
    for (let n = 1; n <= ACCOUNTS; n++) {
      const id = (await owner.post('/api/v1/chatnet-accounts', { displayName: `Shop line ${n}` })).body.id;
      expect((await owner.post(`/api/v1/chatnet-accounts/${id}/login`)).status).toBe(200);
      expect((await owner.post(`/sandbox/accounts/${id}/scan`, {})).body.status).toBe('connected');
      accounts.push(id);
    }
    mark('stack up');
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Run `fn` over 1..n with `width` calls in flight. */
  async function each(n: number, width: number, fn: (i: number) => Promise<void>) {
    let next = 1;
    await Promise.all(
      Array.from({ length: width }, async () => {
        for (let i = next++; i <= n; i = next++) await fn(i);
      }),
    );
  }

  it('completes with exact counts, one message per member at the network, none twice across a restart', async () => {
    // The customers write in, spread over the accounts; 3 of them are then marked lost, which the list's
    // criteria leave out.
    const accountOf = (i: number) => accounts[(i - 1) % ACCOUNTS];
    await each(CHATTING + EXCLUDED, 16, async (i) => {
      const res = await owner.post(`/sandbox/accounts/${accountOf(i)}/inbound`, { fromUid: `uid-${i}`, fromName: `Khách ${i}`, content: 'Shop ơi' });
      expect(res.status).toBe(200);
    });
    mark('inbound posted');
    await each(WALK_INS, 5, async (i) => {
      expect(
        (await owner.post('/api/v1/contacts', { name: `Walk-in ${i}`, phone: `09120001${String(i).padStart(2, '0')}`, status: 'lead' })).status,
      ).toBe(201);
    });
    await eventually(async () => (await owner.get('/api/v1/conversations?limit=1')).body.pagination?.total === CHATTING + EXCLUDED, 60_000, 250);
    const chatting = await eventually(
      async () => {
        const got = (await owner.get('/api/v1/contacts?limit=1&source=chatnet')).body;
        return got.pagination?.total === CHATTING + EXCLUDED ? got : undefined;
      },
      30_000,
      250,
    );
    expect(chatting.pagination.total).toBe(CHATTING + EXCLUDED);
    // On a busy machine crm may answer messaging's contact upsert after its deadline: the conversation is then
    // stored without its contact and linked by a retry a little later (messaging.contact_link). Wait for every
    // conversation to have its contact, as the campaign finds members through their conversations.
    const allConversations = async () => {
      const out: any[] = [];
      for (let page = 1; out.length < CHATTING + EXCLUDED; page++) {
        const data = (await owner.get(`/api/v1/conversations?limit=100&page=${page}`)).body.data;
        if (!data?.length) break;
        out.push(...data);
      }
      return out;
    };
    await eventually(async () => (await allConversations()).every((c) => c.contactId), 60_000, 250);
    mark('contacts and conversations stored');
    const convs = (await owner.get('/api/v1/conversations?limit=100')).body.data.slice(0, EXCLUDED);
    for (const c of convs) expect((await owner.put(`/api/v1/contacts/${c.contactId}`, { status: 'lost' })).status).toBe(200);
    const excludedThreads = new Set<string>(convs.map((c: any) => c.threadId));

    const list = await owner.post('/api/v1/customer-lists', {
      name: 'Everyone but lost',
      criteria: { filters: [{ field: 'status', operator: 'not_equals', value: 'lost' }] },
    });
    expect(list.status).toBe(201);
    expect((await owner.get(`/api/v1/customer-lists/${list.body.id}`)).body.contactCount).toBe(CHATTING + WALK_INS);

    const template = (await owner.post('/api/v1/automation/templates', { name: 'Promo', content: 'Chào {{name}}, tuần này giảm {{discount}}!' }))
      .body;
    const created = await owner.post('/api/v1/campaigns', {
      name: 'Weekly promo',
      listId: list.body.id,
      templateId: template.id,
      variables: { discount: '20%' },
    });
    expect(created.status).toBe(201);
    expect((await owner.get('/api/v1/campaigns')).body[0]).toEqual(
      expect.objectContaining({ id: created.body.id, status: 'draft', contactCount: MEMBERS }),
    );
    expect((await owner.post(`/api/v1/campaigns/${created.body.id}/activate`)).status).toBe(200);

    const sent = async () => {
      const all: Array<{ threadId: string; content: string }> = [];
      for (const id of accounts) all.push(...(await owner.get(`/sandbox/accounts/${id}/sent`)).body.data);
      return all;
    };
    const sentCount = async () => (await owner.get(`/api/v1/campaigns/${created.body.id}`)).body.sentCount as number;
    await eventually(async () => (await sentCount()) >= Math.ceil(CHATTING * 0.15), 60_000, 50);
    mark('15% sent');
    await stack.restart('automation');
    expect((await sent()).length).toBeLessThan(CHATTING);
    mark('restarted');

    const done = await eventually(
      async () => {
        const c = (await owner.get(`/api/v1/campaigns/${created.body.id}`)).body;
        return c.status === 'completed' ? c : undefined;
      },
      90_000,
      250,
    );
    mark('completed');
    expect(done.counts).toEqual({ total: MEMBERS, sent: CHATTING, failed: 0, skipped: WALK_INS, pending: 0, replied: 0, cancelled: 0, seen: 0 });
    expect(done).toEqual(expect.objectContaining({ contactCount: MEMBERS, sentCount: CHATTING }));

    const network = await sent();
    expect(network).toHaveLength(CHATTING);
    const perThread = new Map<string, string[]>();
    for (const m of network) perThread.set(m.threadId, [...(perThread.get(m.threadId) ?? []), m.content]);
    expect(perThread.size).toBe(CHATTING);
    for (const [thread, contents] of perThread) {
      expect(excludedThreads.has(thread)).toBe(false);
      expect(contents).toEqual([`Chào Khách ${thread.slice('uid-'.length)}, tuần này giảm 20%!`]);
    }
    const skipped = (await owner.get(`/api/v1/campaigns/${created.body.id}/recipients?status=skipped`)).body;
    expect(skipped.data.map((r: any) => r.name).sort()).toEqual(Array.from({ length: WALK_INS }, (_, i) => `Walk-in ${i + 1}`).sort());

    // A customer answers after their campaign message: replyRate counts it (1 of all sent); openRate is about reading.
    const answering = [...perThread.keys()][0];
    const answeringAccount = accountOf(Number(answering.slice('uid-'.length)));
    await owner.post(`/sandbox/accounts/${answeringAccount}/inbound`, { fromUid: answering, fromName: 'x', content: 'Cho mình đặt 2 cái' });
    const replied = await eventually(
      async () => {
        const c = (await owner.get(`/api/v1/campaigns/${created.body.id}`)).body;
        return c.counts.replied === 1 ? c : undefined;
      },
      15_000,
      200,
    );
    expect(replied.replyRate).toBe(Math.round((1 / CHATTING) * 10_000) / 10_000);
    expect(replied.openRate).toBe(0);
    mark('reply counted');

    // Every fourth recipient opens the chat: the network sends the account a read receipt for what it sent there.
    const bus = await eventBus(stack);
    try {
      const seenEvents = await bus.subscribe('message.seen');
      const threads = [...perThread.keys()];
      const opening = threads.filter((_, i) => i % 4 === 0);
      const accountOfThread = (thread: string) => accountOf(Number(thread.slice('uid-'.length)));
      await each(opening.length, 8, async (i) => {
        const res = await owner.post(`/sandbox/accounts/${accountOfThread(opening[i - 1])}/seen`, { threadId: opening[i - 1] });
        expect(res.status).toBe(200);
        expect(res.body.chatnetMessageIds).toHaveLength(1);
      });
      const campaignSeen = async (n: number) =>
        eventually(
          async () => {
            const c = (await owner.get(`/api/v1/campaigns/${created.body.id}`)).body;
            return c.counts.seen === n ? c : undefined;
          },
          30_000,
          200,
        );
      const opened = await campaignSeen(opening.length);
      expect(opened.openRate).toBe(Math.round((opening.length / CHATTING) * 10_000) / 10_000);
      expect(opened.replyRate).toBe(Math.round((1 / CHATTING) * 10_000) / 10_000);
      mark('receipts counted');

      // The same receipt from the network again, and messaging's message.seen redelivered twice (same id)
      // and published again under a new id: nobody is counted twice.
      expect((await owner.post(`/sandbox/accounts/${accountOfThread(opening[0])}/seen`, { threadId: opening[0] })).status).toBe(200);
      const first = await eventually(async () => seenEvents[0]);
      await bus.publish('message.seen', first.orgId, first.data, first.id);
      await bus.publish('message.seen', first.orgId, first.data, first.id);
      await bus.publish('message.seen', first.orgId, first.data);
      // One more recipient opens the chat after those: the count moves by exactly one.
      const last = threads.find((_, i) => i % 4 === 1)!;
      expect((await owner.post(`/sandbox/accounts/${accountOfThread(last)}/seen`, { threadId: last })).status).toBe(200);
      const final = await campaignSeen(opening.length + 1);
      expect(final.openRate).toBe(Math.round(((opening.length + 1) / CHATTING) * 10_000) / 10_000);

      const recipients = (await owner.get(`/api/v1/campaigns/${created.body.id}/recipients?status=sent&limit=100`)).body;
      const seenRows: any[] = [];
      for (let page = 1; page <= recipients.pagination.pages; page++) {
        const got =
          page === 1 ? recipients : (await owner.get(`/api/v1/campaigns/${created.body.id}/recipients?status=sent&limit=100&page=${page}`)).body;
        seenRows.push(...got.data.filter((r: any) => r.seenAt !== null));
      }
      expect(seenRows).toHaveLength(opening.length + 1);
      // messaging shows the campaign message of an opened chat as seen.
      const conv = (await owner.get(`/api/v1/conversations/${seenRows[0].conversationId}`)).body;
      expect(conv.messages.find((m: any) => m.id === seenRows[0].messageId)).toEqual(expect.objectContaining({ status: 'seen', source: 'campaign' }));
    } finally {
      await bus.close();
    }
    mark('receipts checked');
  }, 240_000);
});
