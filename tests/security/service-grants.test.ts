import { randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { devInternalAuth, GrantKeeper, status } from '@crm/grpc-kit';
// The token primitives, to sign what a compromised service could sign with its own key.
import { privateKeyFromSeed, seedFor, signToken } from '@crm/grpc-kit/dist/internal-token';
import { eventually, testPool } from '@crm/testing';
import { client, newOrg } from '../support/http';
import { type ServiceName, startStack, type Stack } from '../support/stack';
import { callerMetadata, rawCall } from '../support/raw-grpc';

/**
 * Issue #27 item 3 for automation, which acts on timers long after any request or event (rule runs after waits,
 * campaigns, reminders, email alerts): it cannot choose the org either. The gateway renews each org's grant while the
 * org is in use (RenewGrant), automation keeps it and sends it as the origin of every call it makes on its own, and
 * every method automation may call refuses a call without one, with another org's, or with a "grant" not the gateway's.
 */
describe("automation's and messaging's own calls: bound to the org the gateway granted", () => {
  let stack: Stack;
  let seed: string;
  let a: Awaited<ReturnType<typeof newOrg>>;
  let b: Awaited<ReturnType<typeof newOrg>>;

  /** The grant `service` keeps for `orgId` (its org_grants row), if any. */
  const storedGrant = async (orgId: string, service: ServiceName = 'automation'): Promise<string | undefined> => {
    const db = new PgClient({ connectionString: stack.databaseUrl(service) });
    await db.connect();
    try {
      return (await db.query<{ grant_token: string }>('SELECT grant_token FROM org_grants WHERE org_id = $1', [orgId])).rows[0]?.grant_token;
    } finally {
      await db.end();
    }
  };
  /** automation's own credential for `orgId`, with `origin` beside it: what a compromised automation can send. */
  const asAutomation = (method: string, orgId: string, origin?: string) =>
    callerMetadata(devInternalAuth('automation', seed).sign({ orgId, role: 'admin', origin }, method), origin);
  const getConversation = (orgId: string, origin?: string) =>
    rawCall(
      stack.addr('messaging'),
      'messaging.v1.MessagingService',
      'GetConversation',
      { id: randomUUID(), page: 1, limit: 1 },
      asAutomation('messaging.v1.MessagingService/GetConversation', orgId, origin),
    );
  const patchContact = (orgId: string, id: string, origin?: string) =>
    rawCall(
      stack.addr('crm'),
      'crm.v1.CrmService',
      'PatchContact',
      { id, tags: ['forged'] },
      asAutomation('crm.v1.CrmService/PatchContact', orgId, origin),
    );
  const renew = (grant: string, orgId: string, caller: 'gateway' | 'messaging' = 'gateway') =>
    rawCall(
      stack.addr('automation'),
      'automation.v1.AutomationService',
      'RenewGrant',
      { grant },
      callerMetadata(devInternalAuth(caller, seed).sign({ orgId, role: 'owner' }, 'automation.v1.AutomationService/RenewGrant')),
    );

  /** `caller` asking identity for A's owner: answered under A's grant, refused without one or for org B. */
  const expectIdentityOnlyUnderGrant = async (caller: 'messaging' | 'crm', grantA: string) => {
    const getUser = (orgId: string, origin?: string) =>
      rawCall(
        stack.addr('identity'),
        'identity.v1.IdentityService',
        'GetUser',
        { id: a.user.id },
        callerMetadata(devInternalAuth(caller, seed).sign({ orgId, origin }, 'identity.v1.IdentityService/GetUser'), origin),
      );
    expect((await getUser(a.user.orgId, grantA)).code).toBe(status.OK);
    expect(await getUser(a.user.orgId)).toEqual({ code: status.PERMISSION_DENIED, errorCode: 'origin_required' });
    expect(await getUser(b.user.orgId, grantA)).toEqual({ code: status.PERMISSION_DENIED, errorCode: 'origin_mismatch' });
  };

  beforeAll(async () => {
    stack = await startStack({
      services: ['crm', 'messaging', 'chatnet-connector', 'automation'],
      serviceEnv: { automation: { RUN_POLL_MS: '100' } },
    });
    seed = stack.env.INTERNAL_AUTH_SEED;
    a = await newOrg(client(stack.url), 'Granted A');
    b = await newOrg(client(stack.url), 'Granted B');
  }, 120_000);
  afterAll(() => stack?.stop());

  it("an org's first request through the gateway hands automation the org's grant", async () => {
    await a.owner.get('/api/v1/contacts');
    const grant = await eventually(() => storedGrant(a.user.orgId));
    expect(devInternalAuth('crm', seed).verifyGrant(grant)).toMatchObject({ iss: 'gateway', org: a.user.orgId, svc: 'automation' });
  });

  it('with the org’s grant automation reaches the org; without one, or with another org’s, it reaches nothing', async () => {
    await b.owner.get('/api/v1/contacts');
    const grantA = await eventually(() => storedGrant(a.user.orgId));
    // Passes the gate (the conversation does not exist, so NOT_FOUND from the handler).
    expect((await getConversation(a.user.orgId, grantA)).code).toBe(status.NOT_FOUND);
    expect(await getConversation(a.user.orgId)).toEqual({ code: status.PERMISSION_DENIED, errorCode: 'origin_required' });
    expect(await getConversation(b.user.orgId, grantA)).toEqual({ code: status.PERMISSION_DENIED, errorCode: 'origin_mismatch' });
    // A contact of B's that a compromised automation would like to change.
    const contact = await b.owner.post('/api/v1/contacts', { name: 'Target', phone: '+84900000101' });
    expect(contact.status).toBe(201);
    expect(await patchContact(b.user.orgId, contact.body.id)).toEqual({ code: status.PERMISSION_DENIED, errorCode: 'origin_required' });
    expect(await patchContact(b.user.orgId, contact.body.id, grantA)).toEqual({ code: status.PERMISSION_DENIED, errorCode: 'origin_mismatch' });
    // A "grant" automation (or any service but the gateway) signs is none.
    const gatewayGrant = devInternalAuth('gateway', seed).signGrant(b.user.orgId, 'automation');
    const [, body] = gatewayGrant.split('.');
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString());
    const selfMade = forge(claims, 'automation', seed);
    expect((await patchContact(b.user.orgId, contact.body.id, selfMade)).code).toBe(status.UNAUTHENTICATED);
    expect((await b.owner.get(`/api/v1/contacts/${contact.body.id}`)).body.tags ?? []).not.toContain('forged');
  });

  it('RenewGrant takes only the gateway’s grant for the org of the call', async () => {
    const gateway = devInternalAuth('gateway', seed);
    expect((await renew(gateway.signGrant(a.user.orgId, 'automation'), a.user.orgId)).code).toBe(status.OK);
    expect((await renew(gateway.signGrant(b.user.orgId, 'automation'), a.user.orgId)).code).toBe(status.INVALID_ARGUMENT);
    expect((await renew(gateway.signGrant(a.user.orgId, 'webhooks'), a.user.orgId)).code).toBe(status.INVALID_ARGUMENT);
    expect((await renew('not-a-grant', a.user.orgId)).code).toBe(status.INVALID_ARGUMENT);
    // No other service may call it at all.
    expect((await renew(gateway.signGrant(a.user.orgId, 'automation'), a.user.orgId, 'messaging')).code).toBe(status.PERMISSION_DENIED);
  });

  it("a rule's actions run under the grant: the contact is changed in crm", async () => {
    const owner = a.owner;
    const rule = await owner.post('/api/v1/automation/rules', {
      name: 'Tag new leads',
      trigger: { type: 'contact_created' },
      actions: [{ type: 'add_tag', tag: 'granted' }],
    });
    expect(rule.status).toBe(201);
    expect((await owner.post(`/api/v1/automation/rules/${rule.body.id}/activate`)).body.status).toBe('active');
    const contact = await owner.post('/api/v1/contacts', { name: 'New Lead', phone: '+84900000102' });
    expect(contact.status).toBe(201);
    await eventually(async () => ((await owner.get(`/api/v1/contacts/${contact.body.id}`)).body.tags?.includes('granted') ? true : undefined));
  });
  it("messaging acting on its own (a scheduled message, the assignment repair) reaches identity and the connector only under the org's grant", async () => {
    await a.owner.get('/api/v1/conversations');
    const grantA = await eventually(() => storedGrant(a.user.orgId, 'messaging'));
    expect(devInternalAuth('crm', seed).verifyGrant(grantA)).toMatchObject({ org: a.user.orgId, svc: 'messaging' });
    await expectIdentityOnlyUnderGrant('messaging', grantA);
    // automation's grant is no use to messaging's RenewGrant, nor the other way round.
    const renewMessaging = (grant: string) =>
      rawCall(
        stack.addr('messaging'),
        'messaging.v1.MessagingService',
        'RenewGrant',
        { grant },
        callerMetadata(devInternalAuth('gateway', seed).sign({ orgId: a.user.orgId, role: 'owner' }, 'messaging.v1.MessagingService/RenewGrant')),
      );
    expect((await renewMessaging(devInternalAuth('gateway', seed).signGrant(a.user.orgId, 'automation'))).code).toBe(status.INVALID_ARGUMENT);
    expect((await renewMessaging(devInternalAuth('gateway', seed).signGrant(a.user.orgId, 'messaging'))).code).toBe(status.OK);
  });

  it("crm's workers (report names, phone checks) reach identity and the connector only under the org's grant", async () => {
    await a.owner.get('/api/v1/contacts');
    const grantA = await eventually(() => storedGrant(a.user.orgId, 'crm'));
    expect(devInternalAuth('messaging', seed).verifyGrant(grantA)).toMatchObject({ org: a.user.orgId, svc: 'crm' });
    await expectIdentityOnlyUnderGrant('crm', grantA);
  });

  it("the connector stores a received file in messaging only under the org's grant, and looks up owners only for a request", async () => {
    await a.owner.get('/api/v1/chatnet-accounts');
    const grantA = await eventually(() => storedGrant(a.user.orgId, 'chatnet-connector'));
    const connector = devInternalAuth('connector', seed);
    const upload = async (orgId: string, origin?: string) => {
      const fd = new FormData();
      fd.append('file', new Blob([Buffer.from('a received photo')], { type: 'text/plain' }), 'photo.txt');
      const r = await fetch(`${stack.env.MESSAGING_HTTP_URL}/v1/attachments`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${connector.sign({ orgId, origin }, 'messaging.v1.Http/UploadAttachment')}`,
          ...(origin ? { 'x-crm-origin': origin } : {}),
        },
        body: fd,
      });
      return { status: r.status, code: r.status === 201 ? '' : ((await r.json()) as { error: { code: string } }).error.code };
    };
    expect(await upload(a.user.orgId, grantA)).toEqual({ status: 201, code: '' });
    expect(await upload(a.user.orgId)).toEqual({ status: 403, code: 'origin_required' });
    expect(await upload(b.user.orgId, grantA)).toEqual({ status: 403, code: 'origin_mismatch' });
    const getUser = rawCall(
      stack.addr('identity'),
      'identity.v1.IdentityService',
      'GetUser',
      { id: a.user.id },
      callerMetadata(connector.sign({ orgId: a.user.orgId }, 'identity.v1.IdentityService/GetUser')),
    );
    expect(await getUser).toEqual({ code: status.PERMISSION_DENIED, errorCode: 'origin_required' });
  });

  it('keeps the longest-lived grant, and without one automation refuses to act (retryably) rather than call unbound', async () => {
    const pool = testPool(stack.databaseUrl('automation'), 2);
    try {
      const gatewayKeys = devInternalAuth('gateway', seed);
      const grants = new GrantKeeper(pool, devInternalAuth('automation', seed), 'automation');
      const orgId = randomUUID();
      await expect(grants.actingFor(orgId, 'r-1')).rejects.toMatchObject({ kind: 'unavailable', code: 'grant_missing' });
      const ctx = { orgId, userId: '', role: 'owner', requestId: '', clientIp: '', caller: 'gateway', origin: '' };
      await expect(grants.renew({ ...ctx, caller: 'messaging' }, gatewayKeys.signGrant(orgId, 'automation'))).rejects.toMatchObject({
        kind: 'permission_denied',
      });
      const grant = gatewayKeys.signGrant(orgId, 'automation');
      await grants.renew(ctx, grant);
      expect(await grants.actingFor(orgId, 'r-2')).toEqual({ orgId, role: 'admin', requestId: 'r-2', origin: grant });
      // Another replica, with nothing in memory, reads it from the database; an older grant arriving late changes nothing.
      const other = new GrantKeeper(pool, devInternalAuth('automation', seed), 'automation');
      const now = Math.floor(Date.now() / 1000);
      const claims = JSON.parse(Buffer.from(grant.split('.')[1], 'base64url').toString());
      const sooner = signToken({ ...claims, iat: now - 60, exp: now + 3600 }, privateKeyFromSeed(seedFor(seed, 'gateway')));
      await other.renew(ctx, sooner);
      const expired = signToken({ ...claims, iat: 1, exp: 2 }, privateKeyFromSeed(seedFor(seed, 'gateway')));
      await expect(other.renew(ctx, expired)).rejects.toMatchObject({ kind: 'invalid_argument' });
      expect((await other.actingFor(orgId, 'r-3')).origin).toBe(grant);
      expect(await storedGrant(orgId)).toBe(grant);
    } finally {
      await pool.end();
    }
  });
});

/** The same claims signed by another process's key (the dev seed derives every key): what a compromised service could make. */
function forge(claims: Record<string, unknown>, signer: 'automation', seed: string): string {
  return signToken({ ...claims, iss: signer }, privateKeyFromSeed(seedFor(seed, signer)));
}
