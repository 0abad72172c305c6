import { Client as PgClient } from 'pg';
import { type ClientFor, createServiceClient, loadProto, serviceDefinition, status as grpcStatus } from '@crm/grpc-kit';
import { eventually, testAuth } from '@crm/testing';
import type { Client } from '../support/http';
import { addUser, CrmStack, Org, startCrmStack } from './crm-support';
import { connectPatiently } from '../support/patient-client';

// hasChatnet from a phone lookup on the chat network (issue #15): crm checks a new or changed number through a
// connected account of the org (connector LookupPhone → the sandbox network's directory) and records
// true/false; without a connected account the number stays unchecked (hasChatnet=unknown) and is tried again.
describe('hasChatnet phone check', () => {
  let crm: CrmStack;
  let acme: Org;
  let globex: Org;
  let db: PgClient;
  let lookup: ClientFor<'connector.v1.ConnectorService'>;

  beforeAll(async () => {
    crm = await startCrmStack({
      services: ['chatnet-connector'],
      serviceEnv: {
        crm: {
          CHATNET_PHONE_CHECK_INTERVAL_MS: '20',
          CHATNET_PHONE_CHECK_POLL_MS: '300',
          CHATNET_PHONE_CHECK_RETRY_MS: '400',
          CHATNET_PHONE_CHECK_RETRY_MAX_MS: '800',
        },
        'chatnet-connector': { SCAN_INTERVAL_MS: '500', HEARTBEAT_MS: '500' },
      },
    });
    acme = await crm.newOrg('Acme');
    globex = await crm.newOrg('Globex');
    db = await connectPatiently(crm.stack.databaseUrl('crm'));
    // LookupPhone as crm's phone-check worker calls it: crm's own credential, under the org's grant (ORIGIN_BOUND).
    lookup = createServiceClient(
      serviceDefinition(loadProto('connector/v1/connector.proto'), 'connector.v1.ConnectorService'),
      crm.stack.addr('chatnet-connector'),
      testAuth('crm'),
      5000,
    );
  });
  afterAll(async () => {
    lookup?.close();
    await db?.end();
    await crm?.stop();
  });

  /** The context of crm's worker acting for `orgId`: the org's grant, as the gateway hands crm (RenewGrant). */
  const asWorker = (orgId: string) => ({ orgId, origin: testAuth('gateway').signGrant(orgId, 'crm') });

  /** Create, log in, scan: a connected sandbox account of the org. */
  async function connectAccount(owner: Client, name: string) {
    const created = await owner.post('/api/v1/chatnet-accounts', { displayName: name });
    expect(created.status).toBe(201);
    expect((await owner.post(`/api/v1/chatnet-accounts/${created.body.id}/login`)).status).toBe(200);
    expect((await owner.post(`/sandbox/accounts/${created.body.id}/scan`, {})).status).toBe(200);
    return created.body.id as string;
  }

  async function newContact(owner: Client, name: string, phone?: string) {
    const res = await owner.post('/api/v1/contacts', { name, ...(phone ? { phone } : {}) });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  const hasChatnet = async (owner: Client, id: string) => (await owner.get(`/api/v1/contacts/${id}`)).body.hasChatnet as boolean;
  const unknownIds = async (owner: Client) =>
    ((await owner.get('/api/v1/contacts?hasChatnet=unknown&limit=100')).body.data as { id: string }[]).map((c) => c.id);
  const checked = async (id: string) =>
    (await db.query('SELECT chatnet_checked_at IS NOT NULL AS checked FROM contacts WHERE id = $1', [id])).rows[0].checked as boolean;

  describe('POST /sandbox/network/phones', () => {
    it('registers numbers in the network directory (200), generating the user id when absent', async () => {
      const res = await acme.owner.post('/sandbox/network/phones', {
        phones: [{ phone: '+84 900 000 001', chatnetUid: 'uid-dir-1', displayName: 'Dir One' }, { phone: '+84900000002' }],
      });
      expect(res.status).toBe(200);
      expect(res.body.phones).toEqual([
        { phone: '+84 900 000 001', chatnetUid: 'uid-dir-1', displayName: 'Dir One', acceptsStrangers: true },
        {
          phone: '+84900000002',
          chatnetUid: expect.stringMatching(/^\d{10,}$/),
          displayName: expect.stringMatching(/^Sandbox user /),
          acceptsStrangers: true,
        },
      ]);
    });

    it('400 names the field: no numbers, not a phone number, a number too short', async () => {
      const empty = await acme.owner.post('/sandbox/network/phones', { phones: [] });
      expect(empty.status).toBe(400);
      expect(empty.body.error.details[0].field).toBe('phones');
      const missing = await acme.owner.post('/sandbox/network/phones', {});
      expect(missing.status).toBe(400);
      expect(missing.body.error.details[0].field).toBe('phones');
      const letters = await acme.owner.post('/sandbox/network/phones', { phones: [{ phone: '+84900000001' }, { phone: 'call me' }] });
      expect(letters.status).toBe(400);
      expect(letters.body.error.details[0].field).toBe('phones.1.phone');
      const short = await acme.owner.post('/sandbox/network/phones', { phones: [{ phone: '123' }] });
      expect(short.status).toBe(400);
      expect(short.body.error.details[0].field).toBe('phones.0.phone');
    });

    it('401 without a token; 403 for an agent (sandbox:control)', async () => {
      expect((await crm.api.post('/sandbox/network/phones', { phones: [{ phone: '+84900000003' }] })).status).toBe(401);
      const agent = await addUser(crm.api, acme.owner, 'agent');
      expect((await agent.as.post('/sandbox/network/phones', { phones: [{ phone: '+84900000003' }] })).status).toBe(403);
    });
  });

  describe('with a connected account', () => {
    let onNetwork: string;
    let offNetwork: string;
    let noPhone: string;

    beforeAll(async () => {
      await connectAccount(acme.owner, 'Acme sales');
      expect((await acme.owner.post('/sandbox/network/phones', { phones: [{ phone: '+84911000001' }, { phone: '+84911000003' }] })).status).toBe(200);
      onNetwork = await newContact(acme.owner, 'On the network', '0911 000 001');
      offNetwork = await newContact(acme.owner, 'Not on the network', '0911 000 002');
      noPhone = await newContact(acme.owner, 'No phone');
    });

    it('a number the network knows becomes hasChatnet true, one it does not false; both leave hasChatnet=unknown', async () => {
      await eventually(async () => (await checked(onNetwork)) && (await checked(offNetwork)), 10_000);
      expect(await hasChatnet(acme.owner, onNetwork)).toBe(true);
      expect(await hasChatnet(acme.owner, offNetwork)).toBe(false);
      expect(await hasChatnet(acme.owner, noPhone)).toBe(false);
      const unknown = await unknownIds(acme.owner);
      expect(unknown).not.toContain(onNetwork);
      expect(unknown).not.toContain(offNetwork);
      const trueIds = ((await acme.owner.get('/api/v1/contacts?hasChatnet=true&limit=100')).body.data as { id: string }[]).map((c) => c.id);
      expect(trueIds).toContain(onNetwork);
      expect(trueIds).not.toContain(offNetwork);
    });

    it('a changed number is unchecked again, then checked anew: false → true and true → false', async () => {
      await eventually(async () => (await checked(onNetwork)) && (await checked(offNetwork)), 10_000);
      expect((await acme.owner.put(`/api/v1/contacts/${offNetwork}`, { phone: '0911 000 003' })).status).toBe(200);
      expect((await acme.owner.put(`/api/v1/contacts/${onNetwork}`, { phone: '0911 000 004' })).status).toBe(200);
      await eventually(async () => (await hasChatnet(acme.owner, offNetwork)) === true, 10_000);
      // false alone could be the trigger's reset: the check is done only once the contact leaves the unknown filter.
      await eventually(async () => !(await unknownIds(acme.owner)).includes(onNetwork), 10_000);
      expect(await hasChatnet(acme.owner, onNetwork)).toBe(false);
      expect(await checked(onNetwork)).toBe(true);
    });
  });

  describe('without a connected account', () => {
    it('the number stays unknown (tried, then put back), and is checked once an account of the org connects', async () => {
      // The network knows the number, and Acme has a connected account: Globex's contact is never checked through it.
      await acme.owner.post('/sandbox/network/phones', { phones: [{ phone: '+84922000001' }] });
      const theirs = await newContact(globex.owner, 'Globex lead', '0922 000 001');
      const ours = await newContact(acme.owner, 'Acme lead, same number', '0922 000 001');
      await eventually(async () => (await hasChatnet(acme.owner, ours)) === true, 10_000);
      // Tried and put back for a retry (CHATNET_PHONE_CHECK_RETRY_MS, under a second here), not merely not reached
      // yet nor still held by a claim (whose lease is about a minute).
      const retryIn = `SELECT chatnet_check_after > now() AND chatnet_check_after < now() + interval '2 seconds' AS soon FROM contacts WHERE id = $1`;
      await eventually(async () => (await db.query(retryIn, [theirs])).rows[0].soon, 10_000);
      expect(await checked(theirs)).toBe(false);
      expect(await hasChatnet(globex.owner, theirs)).toBe(false);
      expect(await unknownIds(globex.owner)).toContain(theirs);

      await connectAccount(globex.owner, 'Globex sales');
      await eventually(async () => (await hasChatnet(globex.owner, theirs)) === true, 10_000);
      expect(await unknownIds(globex.owner)).not.toContain(theirs);
    });
  });

  describe('connector LookupPhone (as crm calls it)', () => {
    it('answers found with the network user, or not found, through the org’s connected account', async () => {
      await acme.owner.post('/sandbox/network/phones', { phones: [{ phone: '+84933000001', chatnetUid: 'uid-933', displayName: 'Lan' }] });
      const found = await lookup.LookupPhone<any>({ phone: '+84933000001' }, asWorker(acme.orgId));
      expect(found).toEqual(expect.objectContaining({ found: true, chatnetUid: 'uid-933', displayName: 'Lan', accountId: expect.any(String) }));
      const none = await lookup.LookupPhone<any>({ phone: '+84933000002' }, asWorker(acme.orgId));
      expect(none.found).toBe(false);
    });

    it('INVALID_ARGUMENT names phone; FAILED_PRECONDITION no_connected_account for an org without one', async () => {
      const bad = await lookup.LookupPhone({ phone: 'not a phone' }, asWorker(acme.orgId)).catch((e) => e);
      expect(bad.code).toBe(grpcStatus.INVALID_ARGUMENT);
      expect(bad.message).toContain('phone');
      const lonely = await crm.newOrg('Lonely');
      const none = await lookup.LookupPhone({ phone: '+84933000001' }, asWorker(lonely.orgId)).catch((e) => e);
      expect(none.code).toBe(grpcStatus.FAILED_PRECONDITION);
      expect(none.metadata.get('x-error-code')[0]).toBe('no_connected_account');
    });
  });
});
