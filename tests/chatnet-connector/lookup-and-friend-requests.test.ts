import { randomUUID } from 'node:crypto';
import { eventually } from '@crm/testing';
import { client, newOrg, type Client } from '../support/http';
import { startStack, type Stack } from '../support/stack';
import { addUser, captureEvents } from './support';

// Issue #26 items 1 and 3 through the gateway, on the sandbox network: who a phone number is (every Vietnamese
// spelling one number, paced per account, cached a day), and friend requests to users who take messages only from
// friends, accepted on the network.
const LIMIT = 6;

describe('phone lookup and friend requests (sandbox network)', () => {
  let stack: Stack;
  let owner: Client;
  let api: Client;
  let bus: Awaited<ReturnType<typeof captureEvents>>;
  let account: string;

  async function connectedAccount(o: Client, name: string, uid = `acct-${randomUUID().slice(0, 8)}`): Promise<string> {
    const id = (await o.post('/api/v1/chatnet-accounts', { displayName: name })).body.id;
    expect((await o.post(`/api/v1/chatnet-accounts/${id}/login`)).status).toBe(200);
    expect((await o.post(`/sandbox/accounts/${id}/scan`, { chatnetUid: uid })).body.status).toBe('connected');
    return id;
  }

  beforeAll(async () => {
    stack = await startStack({
      services: ['crm', 'chatnet-connector'],
      serviceEnv: { 'chatnet-connector': { LOOKUP_PER_ACCOUNT_PER_MINUTE: String(LIMIT), HEARTBEAT_MS: '500', SCAN_INTERVAL_MS: '500' } },
    });
    bus = await captureEvents(stack.env.EVENTS_EXCHANGE);
    api = client(stack.url);
    owner = (await newOrg(api, 'Hoa Mai')).owner;
    account = await connectedAccount(owner, 'Hoa Mai line');
    const directory = await owner.post('/sandbox/network/phones', {
      phones: [
        { phone: '+84912345678', chatnetUid: 'u-mai', displayName: 'Chị Mai' },
        { phone: '0987000111', chatnetUid: 'u-shy', displayName: 'Anh Lâm', acceptsStrangers: false },
      ],
    });
    expect(directory.status).toBe(200);
    expect(directory.body.phones[1]).toEqual(expect.objectContaining({ chatnetUid: 'u-shy', acceptsStrangers: false }));
    expect(directory.body.phones[0].acceptsStrangers).toBe(true);
  }, 120_000);
  afterAll(async () => {
    await bus?.stop();
    await stack?.stop();
  });

  describe('POST /api/v1/chatnet-accounts/:id/lookup', () => {
    it('finds a user under every Vietnamese spelling of the number, with their network name', async () => {
      for (const phone of ['0912345678', '+84912345678', '84 912 345 678']) {
        const res = await owner.post(`/api/v1/chatnet-accounts/${account}/lookup`, { phone });
        expect({ phone, status: res.status, body: res.body }).toEqual({
          phone,
          status: 200,
          body: { found: true, chatnetUid: 'u-mai', displayName: 'Chị Mai', avatarUrl: null },
        });
      }
    });

    it('answers found:false (all null) for a number nobody uses', async () => {
      const res = await owner.post(`/api/v1/chatnet-accounts/${account}/lookup`, { phone: '0900000001' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ found: false, chatnetUid: null, displayName: null, avatarUrl: null });
    });

    it('400 names phone when it is missing or not a number', async () => {
      for (const body of [{}, { phone: 'call me' }, { phone: '12' }]) {
        const res = await owner.post(`/api/v1/chatnet-accounts/${account}/lookup`, body);
        expect(res.status).toBe(400);
        expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain('phone');
      }
    });

    it('404 for another org’s account and for an unknown one; 409 account_not_connected before it is logged in', async () => {
      const other = (await newOrg(api, 'Other shop')).owner;
      expect((await other.post(`/api/v1/chatnet-accounts/${account}/lookup`, { phone: '0912345678' })).status).toBe(404);
      expect((await owner.post(`/api/v1/chatnet-accounts/${randomUUID()}/lookup`, { phone: '0912345678' })).status).toBe(404);
      const idle = (await owner.post('/api/v1/chatnet-accounts', { displayName: 'Not logged in' })).body.id;
      const res = await owner.post(`/api/v1/chatnet-accounts/${idle}/lookup`, { phone: '0912345678' });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('account_not_connected');
    });

    it(`paces lookups per account: above ${LIMIT} a minute 429 with Retry-After; a cached answer still answers, another account is not held`, async () => {
      const paced = await connectedAccount(owner, 'Paced line');
      const statuses: number[] = [];
      let limited;
      for (let i = 0; i < 2 * LIMIT + 1 && !limited; i++) {
        const res = await owner.post(`/api/v1/chatnet-accounts/${paced}/lookup`, { phone: `0933${String(i).padStart(6, '0')}` });
        statuses.push(res.status);
        if (res.status === 429) limited = res;
      }
      expect(limited).toBeDefined();
      // Never more than LIMIT fresh lookups reach the network in the window that refused the next one.
      expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(2 * LIMIT);
      expect(statuses.slice(statuses.lastIndexOf(200) - LIMIT + 1).filter((s) => s === 200).length).toBeLessThanOrEqual(LIMIT);
      expect(limited!.body.error.code).toBe('lookup_rate_limited');
      const retryAfter = Number(limited!.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      // The first number is cached for a day: answered without asking the network again.
      expect((await owner.post(`/api/v1/chatnet-accounts/${paced}/lookup`, { phone: '0933000000' })).status).toBe(200);
      // The pace is the account's, not the org's.
      expect((await owner.post(`/api/v1/chatnet-accounts/${account}/lookup`, { phone: '0900000002' })).status).toBe(200);
    });
  });

  describe('friend requests', () => {
    it('202 sends one (status sent), listed under ?status=sent; the network accepting it turns it accepted, announces friend_request.accepted and makes them friends', async () => {
      const sent = await owner.post(`/api/v1/chatnet-accounts/${account}/friend-requests`, {
        phone: '0987 000 111',
        message: 'Chào anh, shop Hoa Mai đây',
      });
      expect(sent.status).toBe(202);
      expect(sent.body).toEqual(
        expect.objectContaining({ id: expect.any(String), chatnetUid: 'u-shy', status: 'sent', createdAt: expect.any(String), acceptedAt: null }),
      );
      // Asking again keeps one request.
      const again = await owner.post(`/api/v1/chatnet-accounts/${account}/friend-requests`, { chatnetUid: 'u-shy', message: 'Nhắc lại' });
      expect(again.status).toBe(202);
      expect(again.body.id).toBe(sent.body.id);

      const pending = await owner.get(`/api/v1/chatnet-accounts/${account}/friend-requests?status=sent`);
      expect(pending.status).toBe(200);
      expect(pending.body.data.map((r: { chatnetUid: string }) => r.chatnetUid)).toEqual(['u-shy']);
      expect(pending.body.pagination).toEqual({ total: 1, page: 1, limit: 20, pages: 1 });
      expect((await owner.get(`/api/v1/chatnet-accounts/${account}/friend-requests?status=accepted`)).body.data).toEqual([]);

      const accepted = await owner.post(`/sandbox/accounts/${account}/friend-requests/u-shy/accept`);
      expect(accepted.status).toBe(200);
      expect(accepted.body).toEqual(expect.objectContaining({ id: sent.body.id, status: 'accepted', acceptedAt: expect.any(String) }));
      const listed = await owner.get(`/api/v1/chatnet-accounts/${account}/friend-requests?status=accepted`);
      expect(listed.body.data).toEqual([expect.objectContaining({ id: sent.body.id, chatnetUid: 'u-shy', status: 'accepted' })]);
      expect((await owner.get(`/api/v1/chatnet-accounts/${account}/friend-requests?status=sent`)).body.data).toEqual([]);

      const event = await bus.waitFor('friend_request.accepted', (e) => e.data.id === sent.body.id);
      expect(event.data).toEqual({ id: sent.body.id, chatnetAccountId: account, chatnetUid: 'u-shy', acceptedAt: expect.any(String) });
      // crm keeps the account's friends on the contacts: the user's contact lists the account as a friend.
      const friendOnContact = await eventually(async () => {
        const list = (await owner.get('/api/v1/contacts?limit=100')).body.data as Array<{ id: string; chatnetUid: string | null }>;
        const c = list.find((x) => x.chatnetUid === 'u-shy');
        if (!c) return undefined;
        const detail = (await owner.get(`/api/v1/contacts/${c.id}`)).body;
        return detail.friends?.some((f: { accountId: string }) => f.accountId === account) ? detail : undefined;
      }, 15_000);
      expect(friendOnContact.friends).toEqual([expect.objectContaining({ chatnetUid: 'u-shy', accountId: account })]);
      // Accepting twice: nothing pending any more.
      expect((await owner.post(`/sandbox/accounts/${account}/friend-requests/u-shy/accept`)).status).toBe(404);
    });

    it('400 without a message, or with both or neither of phone and chatnetUid; bad status filter', async () => {
      const url = `/api/v1/chatnet-accounts/${account}/friend-requests`;
      const fields = async (b: object) => {
        const res = await owner.post(url, b);
        expect(res.status).toBe(400);
        return res.body.error.details.map((d: { field: string }) => d.field);
      };
      expect(await fields({ phone: '0912345678' })).toContain('message');
      expect(await fields({ phone: '0912345678', chatnetUid: 'u-mai', message: 'hi' })).toContain('phone');
      expect(await fields({ message: 'hi' })).toContain('phone');
      expect((await owner.get(`${url}?status=maybe`)).status).toBe(400);
    });

    it('422 not_on_network for a number nobody uses; 404 for another org’s account (send and list) and an unknown request to accept', async () => {
      const res = await owner.post(`/api/v1/chatnet-accounts/${account}/friend-requests`, { phone: '0900000003', message: 'hi' });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('not_on_network');
      const other = (await newOrg(api, 'Another shop')).owner;
      expect((await other.post(`/api/v1/chatnet-accounts/${account}/friend-requests`, { chatnetUid: 'u-mai', message: 'hi' })).status).toBe(404);
      expect((await other.get(`/api/v1/chatnet-accounts/${account}/friend-requests`)).status).toBe(404);
      expect((await other.post(`/sandbox/accounts/${account}/friend-requests/u-mai/accept`)).status).toBe(404);
      expect((await owner.post(`/sandbox/accounts/${account}/friend-requests/u-nobody/accept`)).status).toBe(404);
    });

    it('agents may send and list them; accepting on the sandbox is for owners and admins (403)', async () => {
      const agent = (await addUser(api, owner, 'agent')).client;
      // An account of its own: the lookups above used up the first account's minute.
      const line = await connectedAccount(owner, 'Agents line');
      const res = await agent.post(`/api/v1/chatnet-accounts/${line}/friend-requests`, { chatnetUid: 'u-mai', message: 'hi' });
      expect(res.status).toBe(202);
      expect((await agent.get(`/api/v1/chatnet-accounts/${line}/friend-requests`)).body.data).toHaveLength(1);
      expect((await agent.post(`/sandbox/accounts/${line}/friend-requests/u-mai/accept`)).status).toBe(403);
    });
  });
});
