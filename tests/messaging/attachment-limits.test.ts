import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { eventually } from '@crm/testing';
import type { Stack } from '../support/stack';
import { eventBus, messagingWithFakes, orgWithKey } from './support';
import { connectPatiently } from '../support/patient-client';

const KB = 1024;
/** Small limits through messaging's own settings (defaults 25 MB and 1024 MB), so the files stay small. */
const MAX_BYTES = 512 * KB;
const QUOTA_BYTES = 1024 * KB;

// POST /api/v1/chat/attachments through the gateway (issue #15): a file past ATTACHMENT_MAX_BYTES is 413
// payload_too_large naming the limit; an org past ATTACHMENTS_QUOTA_MB is 413 storage_quota_exceeded; either way
// nothing is kept. The quota is per org, and space comes back when unsent uploads expire (ATTACHMENTS_ORPHAN_HOURS),
// while sent files stay and keep counting.
describe('chat attachments: size limit and storage quota', () => {
  let stack: Stack;
  let db: PgClient;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let fakes: Awaited<ReturnType<typeof messagingWithFakes>>;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-limits-'));
  const filesOf = (orgId: string) => (existsSync(path.join(dir, orgId)) ? readdirSync(path.join(dir, orgId)).sort() : []);
  const rowsOf = async (orgId: string) =>
    (await db.query('SELECT id FROM attachments WHERE org_id = $1 ORDER BY id', [orgId])).rows.map((r) => r.id as string);

  const upload = async (token: string, size: number, name = 'data.bin') => {
    const fd = new FormData();
    fd.append('file', new Blob([Buffer.alloc(size, 7)], { type: 'application/octet-stream' }), name);
    const r = await fetch(`${stack.url}/api/v1/chat/attachments`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: fd });
    return { status: r.status, body: (await r.json()) as any };
  };
  const quotaFull = {
    code: 'storage_quota_exceeded',
    message: "Your organization's attachment storage (1 MB) is full; sent files are kept, unsent uploads expire",
  };

  let first: { id: string };
  let second: { id: string };

  beforeAll(async () => {
    fakes = await messagingWithFakes({
      ATTACHMENTS_DIR: dir,
      ATTACHMENT_MAX_BYTES: String(MAX_BYTES),
      ATTACHMENTS_QUOTA_MB: String(QUOTA_BYTES / 1024 / KB),
    });
    stack = fakes.stack;
    bus = await eventBus(stack);
    a = await orgWithKey(stack.url, 'Org A');
    b = await orgWithKey(stack.url, 'Org B');
    db = await connectPatiently(stack.databaseUrl('messaging'));
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await bus?.close();
    await fakes?.down();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a file one byte past ATTACHMENT_MAX_BYTES is 413 payload_too_large naming the limit; nothing is kept', async () => {
    const res = await upload(a.token, MAX_BYTES + 1);
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: { code: 'payload_too_large', message: 'Attachments are limited to 512 KB' }, requestId: expect.any(String) });
    expect(filesOf(a.orgId)).toEqual([]);
    expect(await rowsOf(a.orgId)).toEqual([]);
  });

  it('a body far past the limit (cut off unread) gets the same answer', async () => {
    const res = await upload(a.token, MAX_BYTES + 2 * 1024 * KB);
    expect(res.status).toBe(413);
    expect(res.body.error).toEqual({ code: 'payload_too_large', message: 'Attachments are limited to 512 KB' });
    expect(filesOf(a.orgId)).toEqual([]);
  });

  it('a file of exactly ATTACHMENT_MAX_BYTES is kept (201)', async () => {
    const res = await upload(a.token, MAX_BYTES, 'first.bin');
    expect(res.status).toBe(201);
    expect(res.body.size).toBe(MAX_BYTES);
    first = res.body;
  });

  it('past the org quota an upload is 413 storage_quota_exceeded and nothing is kept; the last byte of the quota still fits', async () => {
    const kept = await upload(a.token, 400 * KB, 'second.bin');
    expect(kept.status).toBe(201);
    second = kept.body;
    // 912 KB of 1 MB stored: 200 KB more does not fit.
    const refused = await upload(a.token, 200 * KB);
    expect(refused.status).toBe(413);
    expect(refused.body).toEqual({ error: quotaFull, requestId: expect.any(String) });
    expect(filesOf(a.orgId)).toEqual([first.id, second.id].sort());
    expect(await rowsOf(a.orgId)).toEqual([first.id, second.id].sort());
    // Exactly the space left fits; then the quota is full and a single byte is refused.
    const rest = await upload(a.token, QUOTA_BYTES - MAX_BYTES - 400 * KB, 'rest.bin');
    expect(rest.status).toBe(201);
    expect((await upload(a.token, 1)).body.error).toEqual(quotaFull);
    expect((await rowsOf(a.orgId)).length).toBe(3);
  });

  it("another org's storage is its own: org A's full quota does not touch org B", async () => {
    const res = await upload(b.token, MAX_BYTES);
    expect(res.status).toBe(201);
    expect((await upload(b.token, 400 * KB)).status).toBe(201);
    expect((await upload(a.token, 1)).status).toBe(413);
  });

  it('an expired unsent upload frees its space; a sent file stays and keeps counting', async () => {
    const account = fakes.connector.account(a.orgId);
    await bus.inbound(a.orgId, { accountId: account, fromUid: 'uid-limits', fromName: 'Lan' });
    const conversation = await eventually(async () => (await a.owner.get('/api/v1/conversations')).body.data[0]);
    expect((await a.owner.post(`/api/v1/conversations/${conversation.id}/messages`, { content: 'the file', attachments: [second.id] })).status).toBe(
      201,
    );
    // Both older than ATTACHMENTS_ORPHAN_HOURS (24): the sweep, woken as a write that moves a due time earlier wakes it,
    // takes the unsent one only.
    await db.query(`UPDATE attachments SET uploaded_at = now() - interval '25 hours' WHERE id = ANY($1::uuid[])`, [[first.id, second.id]]);
    await db.query(`SELECT pg_notify('messaging_attachments_due', '')`);
    await eventually(async () => !(await rowsOf(a.orgId)).includes(first.id) && !filesOf(a.orgId).includes(first.id), 15_000);
    expect(await rowsOf(a.orgId)).toContain(second.id);

    // 512 KB came free, exactly: a file of that size fits again, and then one byte does not.
    expect((await upload(a.token, MAX_BYTES)).status).toBe(201);
    expect((await upload(a.token, 1)).body.error).toEqual(quotaFull);
  }, 30_000);
});
