import { type ClientFor, createServiceClient, loadProto, serviceDefinition, status } from '@crm/grpc-kit';
import { testAuth } from '@crm/testing';
import { CrmStack, Org, startCrmStack } from './crm-support';
import { expectSameRefusal, httpIssue, rpcIssue } from '../support/rule-parity';

// The gateway refuses these inputs already; another service calling crm over gRPC gets the same 400s,
// and a value identity refuses never becomes "identity is unavailable" (503).
describe('crm over gRPC: bad input is INVALID_ARGUMENT, never INTERNAL or UNAVAILABLE', () => {
  let crm: CrmStack;
  let org: Org;
  let analytics: ClientFor<'crm.v1.AnalyticsService'>;

  beforeAll(async () => {
    crm = await startCrmStack();
    org = await crm.newOrg('Acme');
    analytics = createServiceClient(
      serviceDefinition(loadProto('crm/v1/analytics.proto'), 'crm.v1.AnalyticsService'),
      crm.stack.addr('crm'),
      testAuth('gateway'),
    );
  });
  afterAll(async () => {
    analytics.close();
    await crm.stop();
  });

  const ctx = () => ({ orgId: org.orgId, userId: org.user.id, role: 'owner' });
  const failure = (p: Promise<unknown>) =>
    p.then(
      () => ({ code: status.OK, field: undefined }),
      (err: { code: number; metadata: { get(k: string): unknown[] } }) => {
        const raw = err.metadata.get('x-error-details-bin')[0] as Buffer | undefined;
        return { code: err.code, field: raw ? (JSON.parse(raw.toString('utf8')) as { field: string }[])[0].field : undefined };
      },
    );

  it('TeamPerformance with a NUL in departmentId: identity refuses it, crm names departmentId', async () => {
    expect(await failure(analytics.TeamPerformance({ departmentId: 'a\u0000b' }, ctx()))).toEqual({
      code: status.INVALID_ARGUMENT,
      field: 'departmentId',
    });
  });

  it.each(['0000-01-01T00:00:00.000Z', '+010000-01-01T00:00:00.000Z', '-000001-01-01T00:00:00.000Z'])(
    'ResponseTime and ListContacts with dateFrom %s',
    async (v) => {
      expect(await failure(analytics.ResponseTime({ dateFrom: v }, ctx()))).toEqual({ code: status.INVALID_ARGUMENT, field: 'dateFrom' });
      expect(await failure(crm.crmRpc().ListContacts({ page: 1, limit: 10, dateFrom: v }, ctx()))).toEqual({
        code: status.INVALID_ARGUMENT,
        field: 'dateFrom',
      });
    },
  );

  it('ConversionFunnel ending early in year 1 keeps its default 30 days inside year 1', async () => {
    const out = await analytics.ConversionFunnel({ dateTo: '0001-01-05T00:00:00.000Z' }, ctx());
    expect(out.period?.from).toBe('0001-01-01T00:00:00.000Z');
  });

  it('a NUL byte that reaches PostgreSQL is INVALID_ARGUMENT, not an internal error', async () => {
    const res = await failure(crm.crmRpc().CreateContact({ name: 'Ann\u0000Lee' }, ctx()));
    expect(res.code).toBe(status.INVALID_ARGUMENT);
  });

  it('CreateAppointment with assignedUserId containing NUL is a 400 on assignedUserId, not a 503', async () => {
    const contact = await crm.crmRpc().CreateContact<{ id: string }>({ name: 'Ann' }, ctx());
    const res = await failure(
      crm.crmRpc().CreateAppointment({ contactId: contact.id, title: 'T', scheduledAt: '2031-01-01T00:00:00Z', assignedUserId: 'a\u0000b' }, ctx()),
    );
    expect(res).toEqual({ code: status.INVALID_ARGUMENT, field: 'assignedUserId' });
  });

  // Each rule is stated once (@crm/validation crmRules): the gateway's schema and crm's own check of a direct
  // caller refuse the same value, naming the same field, with the same words.
  describe('one rule, one wording: the gateway 400 and crm INVALID_ARGUMENT agree', () => {
    it.each([
      ['a 51st tag', { name: 'Ann', tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }, 'tags'],
      ['a tag of 51 characters', { name: 'Ann', tags: ['x'.repeat(51)] }, 'tags'],
      ['a source that is no slug', { name: 'Ann', source: 'web site' }, 'source'],
      ['a deal value with 3 decimals', { name: 'Ann', dealValue: 1.005 }, 'dealValue'],
      ['a name of 201 characters', { name: 'x'.repeat(201) }, 'name'],
    ])('POST /contacts and CreateContact with %s', async (_what, input, field) => {
      const http = httpIssue(await org.owner.post('/api/v1/contacts', input));
      const rpc = await rpcIssue(crm.crmRpc().CreateContact(input, ctx()));
      expectSameRefusal(http, rpc, field);
    });

    it.each([
      ['a type that is no slug', { type: 'a b' }, 'type'],
      ['a duration over a week', { duration: 7 * 24 * 60 + 1 }, 'duration'],
    ])('POST /appointments and CreateAppointment with %s', async (_what, extra, field) => {
      const contact = await crm.crmRpc().CreateContact<{ id: string }>({ name: 'Ann' }, ctx());
      const input = { contactId: contact.id, title: 'T', scheduledAt: '2031-01-01T00:00:00.000Z', ...extra };
      const http = httpIssue(await org.owner.post('/api/v1/appointments', input));
      const rpc = await rpcIssue(crm.crmRpc().CreateAppointment(input, ctx()));
      expectSameRefusal(http, rpc, field);
    });

    it('POST /contact-statuses and CreateContactStatus with a position past 10000', async () => {
      const input = { name: `S${Date.now()}`, position: 10_001 };
      const http = httpIssue(await org.owner.post('/api/v1/contact-statuses', input));
      const rpc = await rpcIssue(crm.crmRpc().CreateContactStatus(input, ctx()));
      expect(http).toEqual({ status: 400, issue: { field: 'position', message: 'must be an integer from 0 to 10000' } });
      expect(rpc).toEqual({ code: status.INVALID_ARGUMENT, issue: http.issue });
    });
  });
});
