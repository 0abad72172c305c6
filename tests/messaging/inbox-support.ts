import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from '@crm/testing';
import { client, Client, email } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { eventBus, fakeConnector, fakeCrm, orgWithKey } from './support';

/** A user of the owner's org with the given role, signed in: its client, id and access token (for sockets). */
export async function member(url: string, owner: Client, role: 'agent' | 'team_lead' | 'admin', name: string = role) {
  const address = email(name.replace(/\W/g, ''));
  const password = 'correct horse battery';
  const created = await owner.post('/api/v1/users', { email: address, fullName: `${name} user`, role, password });
  if (created.status !== 201) throw new Error(`user create failed: ${created.status} ${JSON.stringify(created.body)}`);
  const login = await client(url).post('/api/v1/auth/login', { email: address, password });
  if (login.status !== 200) throw new Error(`login failed: ${login.status}`);
  return { api: client(url).as(login.body.token), id: created.body.id as string, token: login.body.token as string };
}

/** What `inboxFixture` starts: messaging (with identity and the gateway) against a fake connector and a fake crm. */
export interface InboxFixture {
  stack: Stack;
  bus: Awaited<ReturnType<typeof eventBus>>;
  connector: Awaited<ReturnType<typeof fakeConnector>>;
  crm: Awaited<ReturnType<typeof fakeCrm>>;
  /** Two orgs, each with its owner's client and an API key: B's ids are "another org's ids" to A. */
  a: Awaited<ReturnType<typeof orgWithKey>>;
  b: Awaited<ReturnType<typeof orgWithKey>>;
  /** Org A's chat-network account (the fake connector's), where A's conversations are. */
  accountA: string;
  /** messaging's environment as the stack gave it (connector, crm, attachments): for a second instance. */
  serviceEnv: Record<string, string>;
  /** Conversation ids of A's contacts by their uid (`uids`), and B's one conversation as `b`. */
  conv: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * The messaging stack most inbox tests need: messaging behind the gateway, a fake connector and crm, two orgs, and
 * one inbound conversation per uid in org A (sent a second apart, so the newest is the last uid's) plus one in org B.
 * `extraEnv` adds to messaging's environment (e.g. a short timer window).
 */
export async function inboxFixture(name: string, uids: string[], extraEnv: Record<string, string> = {}): Promise<InboxFixture> {
  const dir = mkdtempSync(path.join(tmpdir(), `msg-${name}-`));
  const connector = await fakeConnector();
  const crm = await fakeCrm();
  await crm.up();
  const serviceEnv = { CONNECTOR_ADDR: connector.addr, CRM_ADDR: crm.addr, ATTACHMENTS_DIR: dir, ...extraEnv };
  const stack = await startStack({ services: ['messaging'], serviceEnv: { messaging: serviceEnv } });
  const bus = await eventBus(stack);
  const a = await orgWithKey(stack.url, 'Org A');
  const b = await orgWithKey(stack.url, 'Org B');
  const accountA = connector.account(a.orgId);
  for (const [i, uid] of uids.entries()) {
    await bus.inbound(a.orgId, { accountId: accountA, fromUid: uid, fromName: uid, sentAt: new Date(Date.now() - 60_000 + i * 1000).toISOString() });
  }
  await bus.inbound(b.orgId, { accountId: connector.account(b.orgId), fromUid: `${name}-b`, fromName: 'B contact' });
  const conv: Record<string, string> = {};
  const listA = await eventually(async () => {
    const res = await a.owner.get('/api/v1/conversations?limit=100');
    return res.body.data.length === uids.length ? res.body.data : undefined;
  });
  for (const c of listA) conv[c.threadId] = c.id;
  conv.b = (await eventually(async () => (await b.owner.get('/api/v1/conversations')).body.data[0])).id;
  return {
    stack,
    bus,
    connector,
    crm,
    a,
    b,
    accountA,
    serviceEnv,
    conv,
    async stop() {
      await bus.close();
      await stack.stop();
      await connector.down();
      await crm.down();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
