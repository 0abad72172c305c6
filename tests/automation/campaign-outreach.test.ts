import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from '@crm/testing';
import type { Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { org } from './support';

// Issue #26 item 4: a broadcast campaign reaches every lead, including the ones who never wrote. 500 leads imported
// from CSV: some on the sandbox network, some on it but taking messages only from friends, some not on it, some
// without a phone. Every reachable lead gets a conversation started on the campaign's account and exactly one
// message; the rest are skipped with their reason. Nothing is faked but the network's far end.
const ON_NETWORK = 300;
const STRANGERS_REFUSED = 60;
const NOT_ON_NETWORK = 90;
const NO_PHONE = 50;
const LEADS = ON_NETWORK + STRANGERS_REFUSED + NOT_ON_NETWORK + NO_PHONE;

const num = (prefix: string, i: number) => `${prefix}${String(i).padStart(6, '0')}`;

describe(`a broadcast campaign to ${LEADS} imported leads who never wrote`, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'campaign-outreach-'));
  let stack: Stack;
  let owner: Client;
  let token: string;
  let campaignLine: string;
  let latestLine: string;

  async function connectedAccount(name: string): Promise<string> {
    const id = (await owner.post('/api/v1/chatnet-accounts', { displayName: name })).body.id;
    expect((await owner.post(`/api/v1/chatnet-accounts/${id}/login`)).status).toBe(200);
    expect((await owner.post(`/sandbox/accounts/${id}/scan`, { chatnetUid: `acct-${randomUUID().slice(0, 8)}` })).body.status).toBe('connected');
    return id;
  }

  async function importCsv(csv: string) {
    const fd = new FormData();
    fd.append('file', new Blob([csv], { type: 'text/csv' }), 'leads.csv');
    const res = await fetch(`${stack.url}/api/v1/contacts/import`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: fd });
    return { status: res.status, body: (await res.json()) as any };
  }

  async function allRecipients(campaignId: string) {
    const out: Array<{ contactId: string; name: string; status: string; error: string | null; conversationId: string | null }> = [];
    for (let page = 1; ; page++) {
      const res = await owner.get(`/api/v1/campaigns/${campaignId}/recipients?limit=100&page=${page}`);
      out.push(...res.body.data);
      if (page >= res.body.pagination.pages) return out;
    }
  }

  async function campaignFor(listId: string, templateId: string, extra: object = {}) {
    const created = await owner.post('/api/v1/campaigns', { name: `Promo ${randomUUID().slice(0, 4)}`, listId, templateId, ...extra });
    expect(created.status).toBe(201);
    expect((await owner.post(`/api/v1/campaigns/${created.body.id}/activate`)).status).toBe(200);
    return eventually(
      async () => {
        const c = (await owner.get(`/api/v1/campaigns/${created.body.id}`)).body;
        return c.status === 'completed' ? c : undefined;
      },
      240_000,
      500,
    );
  }

  beforeAll(async () => {
    stack = await startStack({
      services: ['crm', 'chatnet-connector', 'messaging', 'automation'],
      serviceEnv: {
        messaging: { ATTACHMENTS_DIR: dir, SEND_LIMITS: 'total=100000/day,1000/1s;campaign=100000/day,1000/1s' },
        // The network's pace (30 lookups a minute) would make 450 lookups take a quarter of an hour; the pace itself
        // is proven in tests/chatnet-connector/lookup-and-friend-requests.test.ts.
        'chatnet-connector': { HEARTBEAT_MS: '500', SCAN_INTERVAL_MS: '500', LOOKUP_PER_ACCOUNT_PER_MINUTE: '100000' },
        automation: { CAMPAIGN_POLL_MS: '100', CAMPAIGN_SEND_PER_MINUTE: '12000' },
      },
    });
    const o = await org(stack, 'Hoa Mai');
    owner = o.owner;
    token = o.token;
    campaignLine = await connectedAccount('Campaign line');
    // Connected last: the account a campaign without one of its own would use; this one must not be.
    latestLine = await connectedAccount('Front desk line');
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('every reachable lead gets a conversation on the campaign’s account and one message; the rest are skipped with their reason', async () => {
    // The network's directory, in mixed spellings (the import stores E.164, the network keys by digits).
    const phones = [
      ...Array.from({ length: ON_NETWORK }, (_, i) => ({
        phone: `+84${num('913', i).slice(0)}`,
        chatnetUid: `u-on-${i}`,
        displayName: `Khách ${i}`,
      })),
      ...Array.from({ length: STRANGERS_REFUSED }, (_, i) => ({
        phone: `0${num('914', i)}`,
        chatnetUid: `u-shy-${i}`,
        displayName: `Kín ${i}`,
        acceptsStrangers: false,
      })),
    ];
    expect((await owner.post('/sandbox/network/phones', { phones })).status).toBe(200);

    const rows = [
      ...Array.from({ length: ON_NETWORK }, (_, i) => `Lead on ${i},0${num('913', i)},outreach`),
      ...Array.from({ length: STRANGERS_REFUSED }, (_, i) => `Lead shy ${i},+84 ${num('914', i)},outreach`),
      ...Array.from({ length: NOT_ON_NETWORK }, (_, i) => `Lead off ${i},0${num('915', i)},outreach`),
      ...Array.from({ length: NO_PHONE }, (_, i) => `Lead nophone ${i},,outreach`),
    ];
    const imported = await importCsv(`name,phone,tags\n${rows.join('\n')}\n`);
    expect(imported.status).toBe(200);
    expect(imported.body).toEqual(expect.objectContaining({ created: LEADS, failed: 0 }));

    const list = await owner.post('/api/v1/customer-lists', {
      name: 'Imported leads',
      criteria: { filters: [{ field: 'tags', operator: 'contains', value: 'outreach' }] },
    });
    expect(list.status).toBe(201);
    const template = (await owner.post('/api/v1/automation/templates', { name: 'Hello', content: 'Chào {{name}}, shop Hoa Mai có ưu đãi mới!' }))
      .body;

    const done = await campaignFor(list.body.id, template.id, { chatnetAccountId: campaignLine });
    expect(done.chatnetAccountId).toBe(campaignLine);
    expect(done.counts).toEqual(
      expect.objectContaining({ total: LEADS, sent: ON_NETWORK, failed: 0, skipped: STRANGERS_REFUSED + NOT_ON_NETWORK + NO_PHONE, pending: 0 }),
    );

    const recipients = await allRecipients(done.id);
    expect(recipients).toHaveLength(LEADS);
    const reasons = (prefix: string) => [...new Set(recipients.filter((r) => r.name.startsWith(prefix)).map((r) => `${r.status}:${r.error ?? ''}`))];
    expect(reasons('Lead on ')).toEqual(['sent:']);
    expect(reasons('Lead shy ')).toEqual(['skipped:friend_required']);
    expect(reasons('Lead off ')).toEqual(['skipped:not_on_network']);
    expect(reasons('Lead nophone ')).toEqual(['skipped:no_phone']);

    // One conversation per reached lead (and per refusing one: started, then refused), all on the campaign's
    // account, each with exactly the one message for the reached ones.
    const convs: Array<{ id: string; chatnetAccountId: string; threadId: string; messageCount: number; contactName: string }> = [];
    for (let page = 1; ; page++) {
      const res = await owner.get(`/api/v1/conversations?limit=100&page=${page}`);
      convs.push(...res.body.data);
      if (page >= res.body.pagination.pages) break;
    }
    expect(convs).toHaveLength(ON_NETWORK + STRANGERS_REFUSED);
    expect(new Set(convs.map((c) => c.chatnetAccountId))).toEqual(new Set([campaignLine]));
    const reached = convs.filter((c) => c.threadId.startsWith('u-on-'));
    expect(reached).toHaveLength(ON_NETWORK);
    expect(reached.every((c) => c.messageCount === 1)).toBe(true);
    expect(convs.filter((c) => c.threadId.startsWith('u-shy-')).every((c) => c.messageCount === 0)).toBe(true);
    // Each conversation is the lead's own contact (the import's), which now carries the network identity.
    const sample = reached.find((c) => c.threadId === 'u-on-7')!;
    expect(sample.contactName).toBe('Lead on 7');
    // The network received the rendered messages (the sandbox keeps an account's last 200), none to the others.
    const sent = (await owner.get(`/sandbox/accounts/${campaignLine}/sent`)).body.data as Array<{ threadId: string; content: string }>;
    expect(sent).toHaveLength(200);
    expect(sent.every((m) => m.threadId.startsWith('u-on-'))).toBe(true);
    const one = sent[0];
    expect(one.content).toBe(`Chào Lead on ${one.threadId.slice('u-on-'.length)}, shop Hoa Mai có ưu đãi mới!`);
    expect((await owner.get(`/sandbox/accounts/${latestLine}/sent`)).body.data).toEqual([]);
  }, 300_000);

  it('without an account of its own, a campaign starts conversations on the org’s most recently connected account', async () => {
    expect(
      (await owner.post('/sandbox/network/phones', { phones: [{ phone: '+84916000001', chatnetUid: 'u-solo', displayName: 'Solo' }] })).status,
    ).toBe(200);
    expect((await importCsv('name,phone,tags\nSolo lead,0916000001,solo\n')).body.created).toBe(1);
    const list = (
      await owner.post('/api/v1/customer-lists', { name: 'Solo', criteria: { filters: [{ field: 'tags', operator: 'contains', value: 'solo' }] } })
    ).body;
    const template = (await owner.post('/api/v1/automation/templates', { name: 'Solo hello', content: 'Chào {{name}}' })).body;
    const done = await campaignFor(list.id, template.id);
    expect(done.chatnetAccountId).toBeNull();
    expect(done.counts).toEqual(expect.objectContaining({ total: 1, sent: 1, skipped: 0 }));
    expect((await owner.get(`/sandbox/accounts/${latestLine}/sent`)).body.data).toEqual([
      expect.objectContaining({ threadId: 'u-solo', content: 'Chào Solo lead' }),
    ]);
  }, 120_000);

  it('a campaign’s chatnetAccountId must be an account of the org (400 naming it); null on update clears it', async () => {
    const list = (await owner.post('/api/v1/customer-lists', { name: 'Any', criteria: { filters: [] } })).body;
    const template = (await owner.post('/api/v1/automation/templates', { name: 'Any', content: 'Hi' })).body;
    const other = await org(stack, 'Other shop');
    const theirs = (await other.owner.post('/api/v1/chatnet-accounts', { displayName: 'Their line' })).body.id;
    for (const chatnetAccountId of [theirs, randomUUID(), 'nope']) {
      const res = await owner.post('/api/v1/campaigns', { name: 'Bad account', listId: list.id, templateId: template.id, chatnetAccountId });
      expect(res.status).toBe(400);
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain('chatnetAccountId');
    }
    const draft = await owner.post('/api/v1/campaigns', {
      name: 'Own line',
      listId: list.id,
      templateId: template.id,
      chatnetAccountId: campaignLine,
    });
    expect(draft.status).toBe(201);
    expect((await owner.get(`/api/v1/campaigns/${draft.body.id}`)).body.chatnetAccountId).toBe(campaignLine);
    expect((await owner.put(`/api/v1/campaigns/${draft.body.id}`, { chatnetAccountId: null })).body.chatnetAccountId).toBeNull();
  });
});
