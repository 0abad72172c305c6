import { status } from '@crm/grpc-kit';
import { sampleValue } from '@crm/metrics';
import { CrmStack, Org, startCrmStack } from './crm-support';

// GetContactStatus answers the gateway's GET /contact-statuses/:id with the one status asked for (issue #30 item 4:
// the gateway stops over-fetching), where the route used to fetch every status of the org, each with its contact
// count, and search the list itself. The HTTP answer is as it was.
describe('GetContactStatus', () => {
  let crm: CrmStack;
  let acme: Org;
  let globex: Org;
  let hotId: string;

  beforeAll(async () => {
    crm = await startCrmStack();
    acme = await crm.newOrg('Acme');
    globex = await crm.newOrg('Globex');
    const hot = await acme.owner.post('/api/v1/contact-statuses', { name: 'Hot lead', color: '#FF0000', position: 1 });
    expect(hot.status).toBe(201);
    hotId = hot.body.id;
    expect((await acme.owner.post('/api/v1/contact-statuses', { name: 'Cold lead', position: 2 })).status).toBe(201);
    for (const name of ['Ann', 'Bob']) expect((await acme.owner.post('/api/v1/contacts', { name, statusId: hotId })).status).toBe(201);
  });
  afterAll(() => crm.stop());

  const ctx = (o: Org, role = 'owner') => ({ orgId: o.orgId, userId: o.user.id, role });

  it('returns the one status with its own contact count, for any role of the org', async () => {
    const s = await crm.crmRpc().GetContactStatus({ id: hotId }, ctx(acme, 'agent'));
    expect(s).toEqual(expect.objectContaining({ id: hotId, name: 'Hot lead', color: '#ff0000', position: 1, contactCount: 2 }));
    expect(s.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('GET /contact-statuses/:id answers exactly what the list says of that status', async () => {
    const res = await acme.owner.get(`/api/v1/contact-statuses/${hotId}`);
    expect(res.status).toBe(200);
    const listed = (await acme.owner.get('/api/v1/contact-statuses')).body.find((x: { id: string }) => x.id === hotId);
    expect(res.body).toEqual(listed);
    expect(res.body).toEqual({
      id: hotId,
      name: 'Hot lead',
      color: '#ff0000',
      position: 1,
      contactCount: 2,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
  });

  it('the route asks crm for that status only, no longer for the whole list (crm counts its gRPC calls by method)', async () => {
    const calls = async (method: string) => {
      const text = await (await fetch(`http://127.0.0.1:${crm.stack.metricsPort('crm')}/metrics`)).text();
      const labels = { service: 'crm', grpc_service: 'crm.v1.CrmService', grpc_method: method, grpc_code: 'OK' };
      return sampleValue(text, 'grpc_server_duration_seconds_count', labels) ?? 0;
    };
    const [gets, lists] = [await calls('GetContactStatus'), await calls('ListContactStatuses')];
    expect((await acme.owner.get(`/api/v1/contact-statuses/${hotId}`)).status).toBe(200);
    expect(await calls('GetContactStatus')).toBe(gets + 1);
    expect(await calls('ListContactStatuses')).toBe(lists);
  });

  it("another org's status is NOT_FOUND over gRPC and 404 over HTTP, as an unknown one is", async () => {
    await expect(crm.crmRpc().GetContactStatus({ id: hotId }, ctx(globex))).rejects.toMatchObject({ code: status.NOT_FOUND });
    const res = await globex.owner.get(`/api/v1/contact-statuses/${hotId}`);
    expect(res.status).toBe(404);
    expect(res.body.error).toEqual({ code: 'not_found', message: 'Contact status not found' });
    const unknown = await acme.owner.get('/api/v1/contact-statuses/7d444840-9dc0-11d1-b245-5ffdce74fad2');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toEqual({ code: 'not_found', message: 'Contact status not found' });
  });

  it('bad input: a malformed id is NOT_FOUND (404 over HTTP, as before), a missing id INVALID_ARGUMENT naming id', async () => {
    for (const id of ['not-a-uuid', `${hotId}x`, 'a\u0000b']) {
      await expect(crm.crmRpc().GetContactStatus({ id }, ctx(acme))).rejects.toMatchObject({ code: status.NOT_FOUND });
    }
    const res = await acme.owner.get('/api/v1/contact-statuses/not-a-uuid');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
    const missing = await crm
      .crmRpc()
      .GetContactStatus({ id: '' }, ctx(acme))
      .then(
        () => undefined,
        (err: { code: number; metadata: { get(k: string): unknown[] } }) => ({
          code: err.code,
          details: JSON.parse(String(err.metadata.get('x-error-details-bin')[0])) as { field: string }[],
        }),
      );
    expect(missing).toEqual({ code: status.INVALID_ARGUMENT, details: [expect.objectContaining({ field: 'id' })] });
  });

  it('needs a token over HTTP (401)', async () => {
    expect((await crm.api.get(`/api/v1/contact-statuses/${hotId}`)).status).toBe(401);
  });
});
