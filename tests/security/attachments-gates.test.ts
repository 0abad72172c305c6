import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { randomBytes, randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { type ClientFor, createServiceClient, loadProto, serviceDefinition, status } from '@crm/grpc-kit';
import { eventually, testAuth } from '@crm/testing';
import { addUser } from '../chatnet-connector/support';
import { eventBus, orgWithKey } from '../messaging/support';
import { client } from '../support/http';
import { expectSameRefusal, httpIssue, rpcIssue } from '../support/rule-parity';
import { startStack, Stack } from '../support/stack';
import { connectPatiently } from '../support/patient-client';

// Issue #27 item 5, the gates that live with the data. Through the gateway, with the sandbox network, the real
// connector, messaging, crm and identity:
// - files the chat network brings (stored by the connector) fill ATTACHMENTS_INBOUND_QUOTA_MB, uploads fill
//   ATTACHMENTS_QUOTA_MB: a stranger sending files never stops agents uploading, and the other way round;
// - ATTACHMENTS_RETENTION_DAYS deletes the bytes of any file, sent ones too, on the timer facility: the message keeps
//   the file with `expiredAt`, and its download answers 410 attachment_expired;
// - DELETE /api/v1/chat/attachments/:id deletes the caller's own unsent upload (204), never a file of a message (409);
// - crm, identity and messaging check URLs they store whoever calls: a network-supplied avatar that is not http(s) is
//   dropped, a user's is refused with 400 naming the field.
const KB = 1024;
/** Each quota is 1 MB: two files of this size do not fit in one, one of them fits in each. */
const BIG = 600 * KB;
const pdf = (size: number) => Buffer.concat([Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1'), randomBytes(size - 15)]);
const file = (fileName: string, bytes: Buffer) => ({ fileName, mimeType: 'application/pdf', contentBase64: bytes.toString('base64') });

describe('attachment gates: inbound quota, retention, deleting uploads; URLs checked by the services that store them', () => {
  let stack: Stack;
  let db: PgClient;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  let c: Awaited<ReturnType<typeof orgWithKey>>;
  /** Org B's connected sandbox account (its first conversation is the one the retention and delete tests use). */
  let bAccountId: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'attach-gates-'));
  const onDisk = (orgId: string) => (existsSync(path.join(dir, orgId)) ? readdirSync(path.join(dir, orgId)) : []);

  const upload = async (token: string, bytes: Buffer, name = 'data.bin') => {
    const fd = new FormData();
    fd.append('file', new Blob([bytes], { type: 'application/octet-stream' }), name);
    const r = await fetch(`${stack.url}/api/v1/chat/attachments`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: fd });
    return { status: r.status, body: (await r.json()) as any };
  };
  const download = async (token: string, url: string) => {
    const r = await fetch(`${stack.url}${url}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: r.status, body: r.headers.get('content-type')?.startsWith('application/json') ? ((await r.json()) as any) : undefined };
  };
  /** A connected sandbox account of the org and its first conversation (a contact wrote first). */
  const connectedAccount = async (org: typeof a, fromUid: string) => {
    const accountId = (await org.owner.post('/api/v1/chatnet-accounts', { displayName: 'Shop line' })).body.id as string;
    expect((await org.owner.post(`/api/v1/chatnet-accounts/${accountId}/login`)).status).toBe(200);
    expect((await org.owner.post(`/sandbox/accounts/${accountId}/scan`, {})).body.status).toBe('connected');
    expect((await org.owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid, fromName: 'Mai Tran', content: 'Hello shop' })).status).toBe(
      200,
    );
    const conversationId = (await eventually(async () => (await org.owner.get('/api/v1/conversations')).body.data[0])).id as string;
    return { accountId, conversationId };
  };
  /** The messages of a conversation that carry files, newest first. */
  const withFiles = async (org: typeof a, conversationId: string) =>
    (await org.owner.get(`/api/v1/conversations/${conversationId}`)).body.messages.filter((m: any) => m.attachments.length > 0);

  beforeAll(async () => {
    stack = await startStack({
      services: ['crm', 'chatnet-connector', 'messaging'],
      // The connector's sandbox takes a pushed file up to the attachment limit; both quotas at their smallest, 1 MB.
      env: { ATTACHMENT_MAX_BYTES: String(1_500_000) },
      serviceEnv: {
        messaging: { ATTACHMENTS_DIR: dir, ATTACHMENTS_QUOTA_MB: '1', ATTACHMENTS_INBOUND_QUOTA_MB: '1' },
        'chatnet-connector': { HEARTBEAT_MS: '500', SCAN_INTERVAL_MS: '500' },
      },
    });
    a = await orgWithKey(stack.url, 'Org A');
    b = await orgWithKey(stack.url, 'Org B');
    c = await orgWithKey(stack.url, 'Org C');
    db = await connectPatiently(stack.databaseUrl('messaging'));
  }, 120_000);
  afterAll(async () => {
    await db?.end();
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('files from the chat network have a quota of their own (ATTACHMENTS_INBOUND_QUOTA_MB)', () => {
    let accountId: string;
    let conversationId: string;
    const push = (content: string, bytes: Buffer) =>
      a.owner.post(`/sandbox/accounts/${accountId}/inbound`, {
        fromUid: 'uid-sender',
        fromName: 'Mai Tran',
        content,
        attachments: [file(`${content}.pdf`, bytes)],
      });

    beforeAll(async () => {
      ({ accountId, conversationId } = await connectedAccount(a, 'uid-sender'));
    }, 60_000);

    it('a contact filling the inbound quota is refused 413 storage_quota_exceeded, and agents still upload into theirs; their full quota stops no received file', async () => {
      expect((await push('first', pdf(BIG))).status).toBe(200);
      await eventually(async () => (await withFiles(a, conversationId)).length === 1);

      // 600 KB of the 1 MB for received files is used: another 600 KB does not fit.
      const refused = await push('second', pdf(BIG));
      expect(refused.status).toBe(413);
      expect(refused.body.error).toEqual({
        code: 'storage_quota_exceeded',
        message: "Your organization's storage for files received from the chat network (1 MB) is full; the file was not kept",
      });

      // The agents' 1 MB is untouched by what contacts sent: 600 KB fits; then it is full, and says so.
      const mine = await upload(a.token, Buffer.alloc(BIG, 1));
      expect(mine.status).toBe(201);
      expect(mine.body).toEqual(expect.objectContaining({ size: BIG, expiredAt: null }));
      const full = await upload(a.token, Buffer.alloc(BIG, 2));
      expect([full.status, full.body.error.code]).toEqual([413, 'storage_quota_exceeded']);
      expect(full.body.error.message).toMatch(/attachment storage \(1 MB\) is full/);

      // Full uploads take nothing from the space left for received files: 300 KB of it still fits.
      expect((await push('third', pdf(300 * KB))).status).toBe(200);
      await eventually(async () => (await withFiles(a, conversationId)).length === 2);
      const origins = await db.query(`SELECT origin, count(*)::int AS n FROM attachments WHERE org_id = $1 GROUP BY origin ORDER BY origin`, [
        a.orgId,
      ]);
      expect(origins.rows).toEqual([
        { origin: 'inbound', n: 2 },
        { origin: 'upload', n: 1 },
      ]);
    });
  });

  describe('ATTACHMENTS_RETENTION_DAYS (365): old files lose their bytes on the timer, sent ones too', () => {
    let conversationId: string;
    let accountId: string;

    beforeAll(async () => {
      ({ accountId, conversationId } = await connectedAccount(b, 'uid-old'));
      bAccountId = accountId;
    }, 60_000);

    it('a received and a sent file older than the retention are deleted from disk; their downloads answer 410 attachment_expired and the messages list them with expiredAt', async () => {
      expect(
        (
          await b.owner.post(`/sandbox/accounts/${accountId}/inbound`, {
            fromUid: 'uid-old',
            fromName: 'Mai Tran',
            content: 'old',
            attachments: [file('old.pdf', pdf(2 * KB))],
          })
        ).status,
      ).toBe(200);
      const received = (await eventually(async () => (await withFiles(b, conversationId))[0])).attachments[0];
      const sendFile = async (content: string) => {
        const up = await upload(b.token, Buffer.alloc(3 * KB, 7), `${content}.bin`);
        expect((await b.owner.post(`/api/v1/conversations/${conversationId}/messages`, { content, attachments: [up.body.id] })).status).toBe(201);
        return up.body;
      };
      const sent = await sendFile('sent long ago');
      const fresh = await sendFile('sent today');
      expect(onDisk(b.orgId)).toEqual(expect.arrayContaining([received.id, sent.id, fresh.id]));

      // 400 days old. The sweep sleeps until the nearest file falls due (a year away); a write that moves a due time
      // earlier wakes it with a NOTIFY, as this one does by hand.
      await db.query(`UPDATE attachments SET uploaded_at = now() - interval '400 days' WHERE id = ANY($1::uuid[])`, [[received.id, sent.id]]);
      await db.query(`SELECT pg_notify('messaging_attachments_due', '')`);

      const gone = await eventually(async () => {
        const r = await download(b.token, sent.url);
        return r.status === 410 ? r : undefined;
      }, 15_000);
      expect(gone.body.error).toEqual({
        code: 'attachment_expired',
        message: "This file was deleted after 365 days (the organization's attachment retention)",
      });
      const receivedGone = await eventually(async () => {
        const r = await download(b.token, received.url);
        return r.status === 410 ? r : undefined;
      });
      expect(receivedGone.body.error.code).toBe('attachment_expired');
      expect((await download(b.token, fresh.url)).status).toBe(200);
      await eventually(async () => !onDisk(b.orgId).includes(sent.id) && !onDisk(b.orgId).includes(received.id));
      expect(onDisk(b.orgId)).toContain(fresh.id);

      const listed = new Map<string, any>((await withFiles(b, conversationId)).flatMap((m: any) => m.attachments.map((f: any) => [f.id, f])));
      expect(listed.get(sent.id)).toEqual(
        expect.objectContaining({ filename: 'sent long ago.bin', expiredAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) }),
      );
      expect(listed.get(received.id).expiredAt).toEqual(expect.any(String));
      expect(listed.get(fresh.id).expiredAt).toBeNull();
    }, 30_000);
  });

  describe('DELETE /api/v1/chat/attachments/:id', () => {
    let conversationId: string;
    const del = (who: { owner: ReturnType<typeof client> } | ReturnType<typeof client>, id: string) =>
      ('owner' in who ? who.owner : who).del(`/api/v1/chat/attachments/${id}`);

    beforeAll(async () => {
      conversationId = (await b.owner.get('/api/v1/conversations')).body.data[0].id;
    });

    it('the uploader deletes an unsent upload: 204, its bytes and row are gone (404 afterwards)', async () => {
      const up = (await upload(b.token, Buffer.alloc(KB, 1))).body;
      expect(onDisk(b.orgId)).toContain(up.id);
      const res = await del(b, up.id);
      expect(res.status).toBe(204);
      expect(onDisk(b.orgId)).not.toContain(up.id);
      expect((await download(b.token, up.url)).status).toBe(404);
      expect((await del(b, up.id)).status).toBe(404);
    });

    it('a file sent with a message, or waiting in a scheduled one, is 409 attachment_in_use and stays', async () => {
      const sent = (await upload(b.token, Buffer.alloc(KB, 2))).body;
      expect(
        (await b.owner.post(`/api/v1/conversations/${conversationId}/messages`, { content: 'with a file', attachments: [sent.id] })).status,
      ).toBe(201);
      const res = await del(b, sent.id);
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('attachment_in_use');
      expect((await download(b.token, sent.url)).status).toBe(200);

      const later = (await upload(b.token, Buffer.alloc(KB, 3))).body;
      const sendAt = new Date(Date.now() + 24 * 3600_000).toISOString();
      expect(
        (await b.owner.post(`/api/v1/conversations/${conversationId}/messages`, { content: 'tomorrow', attachments: [later.id], sendAt })).status,
      ).toBe(202);
      expect((await del(b, later.id)).body.error.code).toBe('attachment_in_use');
      expect(onDisk(b.orgId)).toContain(later.id);
    });

    it("another user's unsent upload is 403; another organization's, or an unknown id, is 404; a malformed id is 400 naming id", async () => {
      const mine = (await upload(b.token, Buffer.alloc(KB, 4))).body;
      const agent = await addUser(client(stack.url), b.owner, 'agent');
      const notTheirs = await del(agent.client, mine.id);
      expect([notTheirs.status, notTheirs.body.error.message]).toEqual([403, 'Only the user who uploaded a file can delete it']);
      expect((await del(c, mine.id)).status).toBe(404);
      expect((await del(b, randomUUID())).status).toBe(404);
      const bad = await del(b, 'not-an-id');
      expect(bad.status).toBe(400);
      expect(bad.body.error.details).toEqual([{ field: 'id', message: 'must be an attachment id' }]);
      expect(onDisk(b.orgId)).toContain(mine.id);
      expect((await del(b, mine.id)).status).toBe(204);
    });
  });

  describe('URLs are checked where they are stored, whoever calls', () => {
    let crm: ClientFor<'crm.v1.CrmService'>;
    let identity: ClientFor<'identity.v1.IdentityService'>;

    beforeAll(() => {
      // As messaging calls crm (its own credential), and as the gateway calls identity.
      crm = createServiceClient(serviceDefinition(loadProto('crm/v1/crm.proto'), 'crm.v1.CrmService'), stack.addr('crm'), testAuth('messaging'));
      identity = createServiceClient(
        serviceDefinition(loadProto('identity/v1/identity.proto'), 'identity.v1.IdentityService'),
        stack.addr('identity'),
        testAuth('gateway'),
      );
    });
    afterAll(() => {
      crm?.close();
      identity?.close();
    });

    it('crm UpsertChatnetContact and LinkOutreachContact store a javascript:, data: or over-long avatar as empty, and keep an https one', async () => {
      // UpsertChatnetContact is origin-bound: messaging asks it under the connector's stamp of an inbound message.
      const origin = testAuth('connector').stampEvent({ id: randomUUID(), type: 'chatnet.inbound', orgId: a.orgId });
      const upsert = (chatnetUid: string, avatar: string) =>
        crm.UpsertChatnetContact(
          { chatnetUid, displayName: 'Network Person', avatar, chatnetAccountId: randomUUID(), threadType: 'user' },
          { orgId: a.orgId, origin },
        );
      const js = await upsert('uid-js', 'javascript:alert(document.cookie)');
      expect([js.created, js.avatar]).toEqual([true, '']);
      expect((await a.owner.get(`/api/v1/contacts/${js.id}`)).body.avatar).toBeNull();
      expect((await upsert('uid-long', `https://cdn.example/${'a'.repeat(2000)}.png`)).avatar).toBe('');
      expect((await upsert('uid-ok', 'https://cdn.example/a.png')).avatar).toBe('https://cdn.example/a.png');
      // A bad avatar later does not replace the good one.
      expect((await upsert('uid-ok', 'javascript:alert(1)')).avatar).toBe('https://cdn.example/a.png');

      // LinkOutreachContact is origin-bound too: messaging asks it while serving a user's (or a campaign's) start.
      const request = testAuth('gateway').sign({ orgId: a.orgId }, 'messaging.v1.MessagingService/StartConversation').split('~')[0];
      const linked = await crm.LinkOutreachContact(
        { chatnetUid: 'uid-data', displayName: 'Data Person', avatar: 'data:text/html,<script>alert(1)</script>', phone: '' },
        { orgId: a.orgId, origin: request },
      );
      expect([linked.created, linked.avatar]).toEqual([true, '']);
    });

    it('a javascript: sender avatar in an inbound message reaches neither the conversation (messaging) nor the contact (crm)', async () => {
      const bus = await eventBus(stack);
      try {
        const accountId = bAccountId;
        await bus.inbound(b.orgId, { accountId, fromUid: 'uid-js-avatar', fromName: 'Script Kid', fromAvatar: 'javascript:alert(1)' });
        const conv = await eventually(async () =>
          (await b.owner.get('/api/v1/conversations')).body.data.find((x: any) => x.contactName === 'Script Kid' && x.contactId),
        );
        expect(conv.contactAvatar).toBeNull();
        expect((await b.owner.get(`/api/v1/contacts/${conv.contactId}`)).body.avatar).toBeNull();
      } finally {
        await bus.close();
      }
    });

    it('identity UpdateUser refuses a javascript: avatar with 400 naming avatar, as the gateway does; an https one is kept', async () => {
      const ctx = { orgId: a.orgId, userId: a.user.id as string, role: 'owner' };
      const http = httpIssue(await a.owner.put(`/api/v1/users/${a.user.id}`, { avatar: 'javascript:alert(1)' }));
      expectSameRefusal(http, await rpcIssue(identity.UpdateUser({ id: a.user.id, avatar: 'javascript:alert(1)' }, ctx)), 'avatar');
      expect((await rpcIssue(identity.UpdateUser({ id: a.user.id, avatar: 'data:image/png;base64,AAAA' }, ctx))).code).toBe(status.INVALID_ARGUMENT);
      expect((await rpcIssue(identity.UpdateUser({ id: a.user.id, avatar: 'https://cdn.example/me.png' }, ctx))).code).toBe(status.OK);
      expect((await a.owner.get('/api/v1/profile')).body.avatar).toBe('https://cdn.example/me.png');
    });
  });
});
