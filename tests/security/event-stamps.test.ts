import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { connect, type ChannelModel, type GetMessage } from 'amqplib';
import { amqpUser, dlqName, EVENT_EXAMPLES, EVENT_STAMP_HEADER, EVENT_STAMP_SEAL_HEADER } from '@crm/events';
import { devInternalAuth, status } from '@crm/grpc-kit';
import { eventually, infra } from '@crm/testing';
import { client, newOrg } from '../support/http';
import { startStack, type Stack } from '../support/stack';
import { connectPatiently } from '../support/patient-client';
import { callerMetadata, rawCall } from '../support/raw-grpc';

/**
 * Issue #27 item 3, for work caused by an event, against real services: the connector stamps each chatnet.inbound it
 * publishes, messaging checks the stamp and asks crm for the thread's contact under it, and crm creates a contact
 * only in the org the stamp vouches for. A messaging credential cannot choose the org (no stamp, a stamp for another
 * org, its own stamp, a stamp from another deployment's keys); an event whose stamp does not vouch for it is
 * dead-lettered with the reason and never stored.
 */
describe('event stamps: a service acting on an event acts only in that event’s org', () => {
  let stack: Stack;
  let seed: string;
  let a: Awaited<ReturnType<typeof newOrg>>;
  let b: Awaited<ReturnType<typeof newOrg>>;
  let amqp: ChannelModel;
  const UPSERT = 'crm.v1.CrmService/UpsertChatnetContact';

  /** A raw call to crm (what a process on the internal network can send): one contact, or the batch form. */
  const rawUpsert = (md: grpc.Metadata, req: object) => rawCall(stack.addr('crm'), 'crm.v1.CrmService', 'UpsertChatnetContact', req, md);
  const rawUpsertMany = (md: grpc.Metadata, req: object) =>
    rawCall(stack.addr('crm'), 'crm.v1.CrmService', 'UpsertChatnetContacts', { contacts: [req] }, md);
  /** messaging's call for `orgId`, with `origin` beside it (as its client sends it). */
  const asMessaging = (orgId: string, origin?: string, method = UPSERT) =>
    callerMetadata(devInternalAuth('messaging', seed).sign({ orgId, origin }, method), origin);
  const target = (uid: string) => ({ chatnetUid: uid, displayName: `Person ${uid}`, avatar: '', chatnetAccountId: randomUUID(), threadType: 'user' });
  const inbound = (orgId: string) => ({ id: randomUUID(), type: 'chatnet.inbound', orgId });

  /** chatnet.inbound for a new one-to-one thread, published as the connector would, with the stamp (and seal) given. */
  async function publishInbound(
    orgId: string,
    stampOf: (e: { id: string; type: string; orgId: string }) => string,
    sealOf?: (stamp: string) => string,
  ) {
    const threadId = `uid-${randomUUID().slice(0, 8)}`;
    const data = {
      ...(EVENT_EXAMPLES['chatnet.inbound'] as Record<string, unknown>),
      accountId: randomUUID(),
      threadId,
      threadType: 'user',
      fromUid: threadId,
      chatnetMessageId: randomUUID(),
    };
    delete (data as { attachments?: unknown }).attachments;
    delete (data as { quoteChatnetMessageId?: unknown }).quoteChatnetMessageId;
    delete (data as { groupName?: unknown }).groupName;
    const e = { ...inbound(orgId), occurredAt: new Date().toISOString(), version: 1, data };
    const stamp = stampOf(e);
    const ch = await amqp.createConfirmChannel();
    await new Promise<void>((resolve, reject) =>
      ch.publish(
        stack.env.EVENTS_EXCHANGE,
        e.type,
        Buffer.from(JSON.stringify(e)),
        {
          persistent: true,
          userId: amqpUser(infra.amqpUrl),
          headers: { [EVENT_STAMP_HEADER]: stamp, ...(sealOf ? { [EVENT_STAMP_SEAL_HEADER]: sealOf(stamp) } : {}) },
        },
        (err) => (err ? reject(err) : resolve()),
      ),
    );
    await ch.close();
    return { eventId: e.id, threadId };
  }

  const contactOfThread = async (orgId: string, threadId: string): Promise<{ contact_id: string | null } | undefined> => {
    const db = await connectPatiently(stack.databaseUrl('messaging'));
    try {
      return (await db.query('SELECT contact_id FROM conversations WHERE org_id = $1 AND thread_id = $2', [orgId, threadId])).rows[0];
    } finally {
      await db.end();
    }
  };

  beforeAll(async () => {
    stack = await startStack({ services: ['crm', 'messaging'] });
    seed = stack.env.INTERNAL_AUTH_SEED;
    a = await newOrg(client(stack.url), 'Stamp A');
    b = await newOrg(client(stack.url), 'Stamp B');
    amqp = await connect(infra.amqpUrl);
  }, 120_000);
  afterAll(async () => {
    await amqp?.close().catch(() => undefined);
    await stack?.stop();
  });

  it('crm upserts a contact for messaging only in the org of the event the connector stamped', async () => {
    const stampA = devInternalAuth('connector', seed).stampEvent(inbound(a.user.orgId));
    expect(await rawUpsert(asMessaging(a.user.orgId, stampA), target('u-a'))).toEqual({ code: status.OK, errorCode: '' });
    // The same stamp for a call naming org B; no stamp at all; messaging's own stamp; a stamp from another deployment.
    expect(await rawUpsert(asMessaging(b.user.orgId, stampA), target('u-b'))).toEqual({
      code: status.PERMISSION_DENIED,
      errorCode: 'origin_mismatch',
    });
    expect(await rawUpsert(asMessaging(b.user.orgId), target('u-b'))).toEqual({ code: status.PERMISSION_DENIED, errorCode: 'origin_required' });
    const own = devInternalAuth('messaging', seed).stampEvent({ ...inbound(b.user.orgId), type: 'messaging.contact_link' });
    expect(await rawUpsert(asMessaging(b.user.orgId, own), target('u-b'))).toEqual({ code: status.PERMISSION_DENIED, errorCode: 'origin_required' });
    const foreign = devInternalAuth('connector', `${seed}-another-deployment`).stampEvent(inbound(b.user.orgId));
    expect((await rawUpsert(asMessaging(b.user.orgId, foreign), target('u-b'))).code).toBe(status.UNAUTHENTICATED);
    // The batch form likewise: only under a stamp of the org it names.
    const MANY = 'crm.v1.CrmService/UpsertChatnetContacts';
    expect(await rawUpsertMany(asMessaging(b.user.orgId, stampA, MANY), target('u-b'))).toEqual({
      code: status.PERMISSION_DENIED,
      errorCode: 'origin_mismatch',
    });
    expect(await rawUpsertMany(asMessaging(b.user.orgId, undefined, MANY), target('u-b'))).toEqual({
      code: status.PERMISSION_DENIED,
      errorCode: 'origin_required',
    });
    expect(await rawUpsertMany(asMessaging(a.user.orgId, stampA, MANY), target('u-a2'))).toEqual({ code: status.OK, errorCode: '' });
    // Nothing was made in B.
    const list = await b.owner.get('/api/v1/contacts');
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([]);
  });

  it('a stamped message from the network gets its contact from crm; one whose stamp does not vouch for it is dead-lettered', async () => {
    const connector = devInternalAuth('connector', seed);
    const good = await publishInbound(a.user.orgId, (e) => connector.stampEvent(e));
    const linked = await eventually(async () => (await contactOfThread(a.user.orgId, good.threadId))?.contact_id ?? undefined, 20_000);
    const contact = await a.owner.get(`/api/v1/contacts/${linked}`);
    expect(contact.status).toBe(200);

    // Another deployment's connector key; an issuer that does not produce chatnet.inbound; a stamp for another org.
    const forged = [
      await publishInbound(b.user.orgId, (e) => devInternalAuth('connector', `${seed}-x`).stampEvent(e)),
      await publishInbound(b.user.orgId, (e) => devInternalAuth('ai', seed).stampEvent(e)),
      await publishInbound(b.user.orgId, (e) => connector.stampEvent({ ...e, orgId: a.user.orgId })),
    ];
    const ch = await amqp.createChannel();
    const reasons = new Map<string, string>();
    await eventually(async () => {
      const m: GetMessage | false = await ch.get(dlqName(`${stack.env.EVENTS_EXCHANGE}.messaging.inbound`), { noAck: true });
      if (m) reasons.set(JSON.parse(m.content.toString()).id, String(m.properties.headers?.['x-refused-reason']));
      return reasons.size === forged.length;
    }, 20_000);
    await ch.close();
    expect(forged.map((f) => reasons.get(f.eventId))).toEqual([
      expect.stringMatching(/does not verify: bad signature/),
      expect.stringMatching(/issuer ai is not a producer of chatnet.inbound/),
      expect.stringMatching(/made for another event/),
    ]);
    for (const f of forged) expect(await contactOfThread(b.user.orgId, f.threadId)).toBeUndefined();
  });

  it("a sealed stamp is taken on the connector's seal (its signature still vouches at crm); no other service's seal passes", async () => {
    const connector = devInternalAuth('connector', seed);
    const good = await publishInbound(
      a.user.orgId,
      (e) => connector.stampEvent(e),
      (stamp) => connector.sealStamp(stamp, ['messaging']),
    );
    const linked = await eventually(async () => (await contactOfThread(a.user.orgId, good.threadId))?.contact_id ?? undefined, 20_000);
    expect((await a.owner.get(`/api/v1/contacts/${linked}`)).status).toBe(200);

    // Another deployment's connector stamp, sealed for messaging by this deployment's crm: not the connector's seal.
    const crm = devInternalAuth('crm', seed);
    const forged = await publishInbound(
      b.user.orgId,
      (e) => devInternalAuth('connector', `${seed}-y`).stampEvent(e),
      (stamp) => crm.sealStamp(stamp, ['messaging']),
    );
    const ch = await amqp.createChannel();
    const reason = await eventually(async () => {
      const m: GetMessage | false = await ch.get(dlqName(`${stack.env.EVENTS_EXCHANGE}.messaging.inbound`), { noAck: true });
      return m && JSON.parse(m.content.toString()).id === forged.eventId ? String(m.properties.headers?.['x-refused-reason']) : undefined;
    }, 20_000);
    await ch.close();
    expect(reason).toMatch(/does not verify: bad signature/);
    expect(await contactOfThread(b.user.orgId, forged.threadId)).toBeUndefined();
  });
});
