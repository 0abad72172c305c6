import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { eventually } from '@crm/testing';
import { processedBy } from '../support/consumers';
import type { Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { eventBus, fakeConnector, org } from './support';
import { connectPatiently } from '../support/patient-client';

// The whole chat path with the real crm and messaging services (only the chat network is faked): a
// message arrives from the network, messaging stores it and announces message.received, a keyword rule
// answers through messaging's one send pipeline, and the reply reaches the network once.
describe('automation with crm and messaging: keyword auto-reply', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let connector: Awaited<ReturnType<typeof fakeConnector>>;
  let messagingDb: PgClient;
  let owner: Client;
  let orgId: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'automation-attachments-'));

  beforeAll(async () => {
    connector = await fakeConnector();
    stack = await startStack({
      services: ['crm', 'messaging', 'automation'],
      serviceEnv: { messaging: { CONNECTOR_ADDR: connector.addr, ATTACHMENTS_DIR: dir }, automation: { RUN_POLL_MS: '100' } },
    });
    bus = await eventBus(stack);
    messagingDb = await connectPatiently(stack.databaseUrl('messaging'));
    const a = await org(stack, 'Acme');
    owner = a.owner;
    orgId = a.orgId;
  }, 60_000);
  afterAll(async () => {
    await messagingDb?.end();
    await bus?.close();
    await stack?.stop();
    await connector?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an inbound "báo giá" gets the rendered template as a reply in the same conversation, sent once', async () => {
    const tpl = await owner.post('/api/v1/automation/templates', { name: 'Quote', content: 'Dạ chào {{name}}, em gửi báo giá ngay ạ' });
    const rule = await owner.post('/api/v1/automation/rules', {
      name: 'Quote request',
      trigger: { type: 'keyword', keywords: ['bao gia'] },
      actions: [
        { type: 'send_message', templateId: tpl.body.id },
        { type: 'add_tag', tag: 'asked-for-quote' },
      ],
    });
    expect((await owner.post(`/api/v1/automation/rules/${rule.body.id}/activate`)).status).toBe(200);

    const accountId = connector.account(orgId);
    const uid = `uid-${randomUUID().slice(0, 8)}`;
    const inbound = {
      accountId,
      chatnetMessageId: `in-${randomUUID()}`,
      threadId: uid,
      threadType: 'user',
      fromUid: uid,
      fromName: 'Lan',
      fromAvatar: '',
      content: 'Shop ơi cho mình xin BÁO GIÁ',
      contentType: 'text',
      sentAt: new Date().toISOString(),
    };
    await bus.publish('chatnet.inbound', orgId, inbound);

    const reply = await eventually(async () => connector.sent.find((s) => s.accountId === accountId), 15_000);
    expect(reply).toEqual(expect.objectContaining({ threadId: uid, content: 'Dạ chào Lan, em gửi báo giá ngay ạ' }));
    const runs = await eventually(async () => {
      const r = (await owner.get(`/api/v1/automation/rules/${rule.body.id}/runs`)).body;
      return r.data[0]?.status === 'succeeded' ? r : undefined;
    });
    expect(runs.data[0]).toEqual(expect.objectContaining({ eventType: 'message.received', actionsDone: 2 }));

    // The reply is in the conversation, and the contact crm created for the sender got the tag.
    const convs = (await owner.get('/api/v1/conversations')).body.data;
    const conv = convs.find((c: any) => c.chatnetAccountId === accountId);
    const detail = (await owner.get(`/api/v1/conversations/${conv.id}`)).body;
    expect(detail.messages.map((m: any) => m.content)).toEqual(
      expect.arrayContaining(['Shop ơi cho mình xin BÁO GIÁ', 'Dạ chào Lan, em gửi báo giá ngay ạ']),
    );
    const contact = await eventually(async () => {
      const c = (await owner.get(`/api/v1/contacts/${conv.contactId}`)).body;
      return c.tags?.includes('asked-for-quote') ? c : undefined;
    });
    expect(contact.name).toBe('Lan');

    // The same network message again (a redelivery) sends nothing more: messaging handled it (storing a message and
    // announcing message.received happen in that transaction) and stored nothing new, so no rule ran again.
    const again = await bus.publish('chatnet.inbound', orgId, inbound);
    await processedBy(messagingDb, `${stack.env.EVENTS_EXCHANGE}.messaging.inbound`, [again.id]);
    expect((await owner.get(`/api/v1/conversations/${conv.id}`)).body.messages).toHaveLength(detail.messages.length);
    expect((await owner.get(`/api/v1/automation/rules/${rule.body.id}/runs`)).body.pagination.total).toBe(1);
    expect(connector.sent.filter((s) => s.accountId === accountId)).toHaveLength(1);
  });
});
