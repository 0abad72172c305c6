import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { devInternalAuth, status } from '@crm/grpc-kit';
import { client, newOrg } from '../support/http';
import { startStack, type Stack } from '../support/stack';
import { callerMetadata, rawCall } from '../support/raw-grpc';

/**
 * Issue #27 item 3, against real services: an internal credential is good for one call of the method it was made
 * for (one seen on the wire cannot be replayed, nor used for another method), and a service whose calls are bound to
 * an origin cannot choose the org: the connector reads a file only for an org messaging (or the gateway's user)
 * vouched for, and ai reads a conversation only for a user's request.
 */
describe('internal calls: single-use credentials bound to their method and to an origin', () => {
  let stack: Stack;
  let a: Awaited<ReturnType<typeof newOrg>>;
  let b: Awaited<ReturnType<typeof newOrg>>;
  let seed: string;
  const DOWNLOAD = 'messaging.v1.Http/DownloadAttachment';

  /** One call to messaging with exactly the metadata given (what a process on the internal network can send): its status. */
  const rawMessaging = async (method: string, req: object, md: grpc.Metadata): Promise<number> =>
    (await rawCall(stack.addr('messaging'), 'messaging.v1.MessagingService', method, req, md)).code;
  const metadata = callerMetadata;
  const tokenOf = (credential: string) => credential.split('~')[0];

  beforeAll(async () => {
    stack = await startStack({ services: ['messaging'] });
    seed = stack.env.INTERNAL_AUTH_SEED;
    a = await newOrg(client(stack.url), 'Origin A');
    b = await newOrg(client(stack.url), 'Origin B');
  }, 120_000);
  afterAll(() => stack?.stop());

  it('refuses a replayed credential, and one presented for another method than it was made for', async () => {
    const gateway = devInternalAuth('gateway', seed);
    const ctx = { orgId: a.user.orgId, userId: a.user.id, role: 'owner' };
    const credential = gateway.sign(ctx, 'messaging.v1.MessagingService/ListConversations');
    expect(await rawMessaging('ListConversations', { page: 1, limit: 10 }, metadata(credential))).toBe(status.OK);
    expect(await rawMessaging('ListConversations', { page: 1, limit: 10 }, metadata(credential))).toBe(status.UNAUTHENTICATED);
    // Made for listing, presented for reading one conversation (which the gateway does sign for on other calls).
    const forList = gateway.sign(ctx, 'messaging.v1.MessagingService/ListConversations');
    expect(await rawMessaging('GetConversation', { id: randomUUID(), page: 1, limit: 10 }, metadata(forList))).toBe(status.UNAUTHENTICATED);
    // A fresh credential for the right method works.
    expect(
      await rawMessaging(
        'GetConversation',
        { id: randomUUID(), page: 1, limit: 10 },
        metadata(gateway.sign(ctx, 'messaging.v1.MessagingService/GetConversation')),
      ),
    ).toBe(status.NOT_FOUND);
  });

  it("a connector credential cannot fetch another org's attachment, nor its own org's on its own say-so", async () => {
    const fd = new FormData();
    fd.append('file', new Blob([Buffer.from('quarterly numbers')], { type: 'text/plain' }), 'numbers.txt');
    const up = await fetch(`${stack.url}/api/v1/chat/attachments`, { method: 'POST', headers: { authorization: `Bearer ${a.token}` }, body: fd });
    expect(up.status).toBe(201);
    const fileId = ((await up.json()) as { id: string }).id;
    const connector = devInternalAuth('connector', seed);
    // What messaging hands the connector when it asks it to send for an org: its own credential for that org.
    const originFor = (orgId: string) => tokenOf(devInternalAuth('messaging', seed).sign({ orgId }, 'connector.v1.ConnectorService/SendChatMessage'));
    const fetchAs = async (orgId: string, origin?: string) => {
      const r = await fetch(`${stack.env.MESSAGING_HTTP_URL}/v1/attachments/${fileId}`, {
        headers: { authorization: `Bearer ${connector.sign({ orgId, origin }, DOWNLOAD)}`, ...(origin ? { 'x-crm-origin': origin } : {}) },
      });
      return { status: r.status, code: r.status === 200 ? '' : ((await r.json()) as { error: { code: string } }).error.code };
    };
    expect(await fetchAs(a.user.orgId, originFor(a.user.orgId))).toEqual({ status: 200, code: '' });
    // For org B, vouched for B: A's file does not exist there.
    expect((await fetchAs(b.user.orgId, originFor(b.user.orgId))).status).toBe(404);
    // Naming A with an origin for B, or naming either with no origin but its own: refused before any lookup.
    expect(await fetchAs(a.user.orgId, originFor(b.user.orgId))).toEqual({ status: 403, code: 'origin_mismatch' });
    expect(await fetchAs(a.user.orgId)).toEqual({ status: 403, code: 'origin_required' });
    expect(await fetchAs(b.user.orgId)).toEqual({ status: 403, code: 'origin_required' });
  });

  it("ai reads a conversation only for an org a user's request vouched for", async () => {
    const ai = devInternalAuth('ai', seed);
    const method = 'messaging.v1.MessagingService/GetConversation';
    const req = { id: randomUUID(), page: 1, limit: 10 };
    expect(await rawMessaging('GetConversation', req, metadata(ai.sign({ orgId: a.user.orgId }, method)))).toBe(status.PERMISSION_DENIED);
    // The gateway's credential for the user's AI request, forwarded as the origin: the call goes through (to a 404).
    const origin = tokenOf(
      devInternalAuth('gateway', seed).sign({ orgId: a.user.orgId, userId: a.user.id, role: 'owner' }, 'ai.v1.AiService/ReplyDraft'),
    );
    expect(await rawMessaging('GetConversation', req, metadata(ai.sign({ orgId: a.user.orgId, origin }, method), origin))).toBe(status.NOT_FOUND);
    expect(await rawMessaging('GetConversation', req, metadata(ai.sign({ orgId: b.user.orgId, origin }, method), origin))).toBe(
      status.PERMISSION_DENIED,
    );
  });
  it("crm reads a contact's conversations, a task's conversation and the open hours only for a request it serves", async () => {
    const crm = devInternalAuth('crm', seed);
    const origin = tokenOf(
      devInternalAuth('gateway', seed).sign({ orgId: a.user.orgId, userId: a.user.id, role: 'owner' }, 'crm.v1.CrmService/GetContact'),
    );
    const asCrm = (method: string, orgId: string, withOrigin?: string) =>
      metadata(crm.sign({ orgId, userId: a.user.id, role: 'owner', origin: withOrigin }, `messaging.v1.MessagingService/${method}`), withOrigin);
    const conversation = { id: randomUUID(), page: 1, limit: 1 };
    expect(await rawMessaging('GetConversation', conversation, asCrm('GetConversation', a.user.orgId))).toBe(status.PERMISSION_DENIED);
    expect(await rawMessaging('ContactConversations', { contactId: randomUUID() }, asCrm('ContactConversations', a.user.orgId))).toBe(
      status.PERMISSION_DENIED,
    );
    expect(await rawMessaging('GetConversation', conversation, asCrm('GetConversation', a.user.orgId, origin))).toBe(status.NOT_FOUND);
    expect(await rawMessaging('GetConversation', conversation, asCrm('GetConversation', b.user.orgId, origin))).toBe(status.PERMISSION_DENIED);
    const hours = (orgId: string, withOrigin?: string) =>
      rawCall(
        stack.addr('messaging'),
        'messaging.v1.ServiceLevelsService',
        'ListBusinessHours',
        {},
        metadata(
          crm.sign({ orgId, userId: a.user.id, role: 'owner', origin: withOrigin }, 'messaging.v1.ServiceLevelsService/ListBusinessHours'),
          withOrigin,
        ),
        'messaging/v1/service-levels.proto',
      );
    expect(await hours(a.user.orgId)).toEqual({ code: status.PERMISSION_DENIED, errorCode: 'origin_required' });
    expect((await hours(a.user.orgId, origin)).code).toBe(status.OK);
  });
});
