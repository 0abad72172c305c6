import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { SecretBox } from '@crm/crypto';
import { migrate, type Pool } from '@crm/db';
import { createLogger } from '@crm/logger';
import { createTestDatabase, type TestDatabase, testPool } from '@crm/testing';
import * as deliveries from '../../services/webhooks/src/db/deliveries.repo';
import { secretAad } from '../../services/webhooks/src/deps';
import { DeliveryWorker } from '../../services/webhooks/src/delivery/worker';
import type { AttemptResult, SendRequest, WebhookSender } from '../../services/webhooks/src/delivery/sender';
import { generateSecret } from '../../services/webhooks/src/domain/signing';

// The worker against a real queue, with a stand-in sender that answers after a few milliseconds: behind a fast
// endpoint with a backlog, freed slots are gathered into one claim, so the queue's round trips stay a fraction of
// the deliveries; the bound per endpoint holds; each delivery is sent once; a lone delivery is still sent at once.
describe('webhook worker behind a backlog', () => {
  let db: TestDatabase;
  let pool: Pool;
  let worker: DeliveryWorker | undefined;
  const box = SecretBox.fromEnv(randomBytes(32).toString('base64'));
  /** Claim statements sent; `dueAnswered`: claims of due rows that have returned (the worker has had that look). */
  const claims = { ids: 0, due: 0, dueAnswered: 0 };

  beforeAll(async () => {
    db = await createTestDatabase('webhooks_backlog');
    pool = testPool(db.url, 6);
    await migrate(pool, path.join(__dirname, '../../services/webhooks/migrations'));
    // Count the claim statements the worker sends (by their prepared-statement names).
    const query = pool.query.bind(pool) as (...a: unknown[]) => unknown;
    (pool as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
      const name = (a[0] as { name?: string } | undefined)?.name;
      if (name === 'webhooks_claim_ids' || name === 'webhooks_claim_endpoints') claims.ids++;
      if (name !== 'webhooks_claim_due') return query(...a);
      claims.due++;
      const answer = query(...a) as Promise<unknown>;
      void answer.then(
        () => claims.dueAnswered++,
        () => undefined,
      );
      return answer;
    };
  });
  afterEach(async () => {
    await worker?.stop();
    worker = undefined;
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  /** A sender that answers 200 after `delay` ms (per URL), recording what it sent and the most requests open at once per URL. */
  const fakeSender = (delay: number | ((url: string) => number)) => {
    const sent: string[] = [];
    const open = new Map<string, number>();
    const peak = new Map<string, number>();
    const sender = {
      async send(r: SendRequest): Promise<AttemptResult> {
        open.set(r.url, (open.get(r.url) ?? 0) + 1);
        peak.set(r.url, Math.max(peak.get(r.url) ?? 0, open.get(r.url)!));
        const startedAt = new Date();
        const delayMs = typeof delay === 'number' ? delay : delay(r.url);
        await new Promise((res) => setTimeout(res, delayMs));
        open.set(r.url, open.get(r.url)! - 1);
        sent.push(r.id);
        return { ok: true, statusCode: 200, durationMs: delayMs, error: null, responseBody: '', responseBodyTruncated: false, startedAt };
      },
    };
    return { sender: sender as unknown as WebhookSender, sent, peak };
  };
  const startWorker = async (sender: WebhookSender) => {
    worker = new DeliveryWorker({
      pool,
      databaseUrl: db.url,
      log: createLogger('test', 'silent'),
      box,
      sender,
      schedule: [60_000],
      disableAfterMs: 86_400_000,
      concurrency: 50,
      endpointConcurrency: 8,
      pollMs: 60_000,
      leaseMs: 60_000,
      retentionMs: 86_400_000,
    });
    await worker.start();
    // The worker's LISTEN connection is up before anything is announced.
    const until = Date.now() + 5_000;
    while (!worker.listening && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    expect(worker.listening).toBe(true);
  };
  const addHook = async (orgId: string, url: string, type: string) => {
    const id = randomUUID();
    await pool.query(`INSERT INTO webhook_settings (id, org_id, url, events, secret_enc) VALUES ($1, $2, $3, $4, $5)`, [
      id,
      orgId,
      url,
      [type],
      box.encrypt(generateSecret(), secretAad(orgId, id)),
    ]);
    return id;
  };
  const events = (orgId: string, n: number, type: string) => Array.from({ length: n }, () => ({ orgId, eventId: randomUUID(), type, payload: '{}' }));
  const waitFor = async (check: () => boolean, ms = 15_000) => {
    const until = Date.now() + ms;
    while (!check() && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    return check();
  };

  it('gathers the slots a fast endpoint frees into few claims, within its bound, each delivery sent once', async () => {
    const orgId = randomUUID();
    await addHook(orgId, 'http://127.0.0.1/fast', 'message.received');
    const { sender, sent, peak } = fakeSender(3);
    await startWorker(sender);
    claims.ids = 0;
    claims.due = 0;
    const N = 400;
    // Announced in batches, as the consumer's fan-out does under load.
    for (let i = 0; i < N; i += 100) await deliveries.fanOut(pool, events(orgId, 100, 'message.received'));
    expect(await waitFor(() => sent.length >= N)).toBe(true);
    // Stopped, the worker has ended every send it started: what `sent` holds now is all it sends.
    await worker!.stop();
    worker = undefined;
    expect(sent).toHaveLength(N);
    expect(new Set(sent).size).toBe(N);
    expect(peak.get('http://127.0.0.1/fast')).toBe(8);
    // Gathered, each claim takes about half the bound or more: about N / 4 statements.
    // (A claim per finished request looked at many more rows and made about N / 2 statements.)
    expect(claims.ids + claims.due).toBeLessThan(N / 3);
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE org_id = $1 AND status = 'succeeded'`, [orgId]);
    expect(rows[0].n).toBe(N);
  });

  it('sends a lone delivery at once, and serves a second endpoint while the first has a backlog', async () => {
    const orgId = randomUUID();
    await addHook(orgId, 'http://127.0.0.1/busy', 'conversation.created');
    await addHook(orgId, 'http://127.0.0.1/other', 'conversation.archived');
    // The busy endpoint is slow (80 deliveries at 8 × 400 ms take 4 s), so "did not wait for them" holds by a
    // wide margin on a loaded machine too.
    const { sender, sent } = fakeSender((url) => (url.endsWith('/busy') ? 400 : 20));
    await startWorker(sender);
    const t0 = Date.now();
    const [lone] = events(orgId, 1, 'conversation.archived');
    await deliveries.fanOut(pool, [lone]);
    expect(await waitFor(() => sent.includes(lone.eventId), 5_000)).toBe(true);
    // "At once": the poll that would otherwise find it is a minute away; 5 s leaves room for a loaded machine.
    expect(Date.now() - t0).toBeLessThan(5_000);

    const backlog = events(orgId, 80, 'conversation.created');
    await deliveries.fanOut(pool, backlog);
    const [other] = events(orgId, 1, 'conversation.archived');
    await deliveries.fanOut(pool, [other]);
    expect(await waitFor(() => sent.includes(other.eventId), 10_000)).toBe(true);
    // The other endpoint's one does not wait for the backlog: proven by order, not by the clock. It went out while
    // less than half of the backlog had (2 s of its 4 s); waiting for the backlog would put all 80 before it.
    const backlogBefore = sent.slice(0, sent.indexOf(other.eventId)).filter((id) => backlog.some((e) => e.eventId === id)).length;
    expect(backlogBefore).toBeLessThan(backlog.length / 2);
    expect(await waitFor(() => backlog.every((e) => sent.includes(e.eventId)))).toBe(true);
  });

  it('a retry that fell due is sent before the new deliveries of its busy endpoint, without waiting for the poll', async () => {
    const orgId = randomUUID();
    const hook = await addHook(orgId, 'http://127.0.0.1/retrying', 'contact.created');
    const { sender, sent } = fakeSender(5);
    const looked = claims.dueAnswered;
    await startWorker(sender);
    // Past the worker's first look at the table (its claim of due rows has answered); its poll is a minute away.
    expect(await waitFor(() => claims.dueAnswered > looked, 5_000)).toBe(true);
    // A delivery whose retry fell due a second ago: nothing announces it.
    const retry = randomUUID();
    await pool.query(
      `INSERT INTO webhook_deliveries (id, org_id, webhook_id, event_id, event_type, payload, status, attempts, retries, next_attempt_at)
       VALUES (gen_random_uuid(), $1, $2, $3, 'contact.created', '{}', 'pending', 1, 1, now() - interval '1 second')`,
      [orgId, hook, retry],
    );
    const fresh = events(orgId, 200, 'contact.created');
    await deliveries.fanOut(pool, fresh);
    expect(await waitFor(() => fresh.every((e) => sent.includes(e.eventId)))).toBe(true);
    // Claimed by endpoint, oldest due first: the retry is in the first claim, with the first new ones. (Among this
    // endpoint's deliveries: rows an earlier test left pending are sent by this worker too.)
    const mine = new Set<string>([retry, ...fresh.map((e) => e.eventId)]);
    const order = sent.filter((id) => mine.has(id));
    expect(order.indexOf(retry)).toBeGreaterThanOrEqual(0);
    expect(order.indexOf(retry)).toBeLessThan(8);
  });

  it('reads announcements by endpoint, and the ids alone of an earlier version', () => {
    const [w, a, b] = [randomUUID(), randomUUID(), randomUUID()];
    expect(deliveries.parseAnnouncement(`${w}:${a},${b}`)).toEqual({ webhookId: w, ids: [a, b] });
    expect(deliveries.parseAnnouncement(`${a},${b}`)).toEqual({ ids: [a, b] });
    expect(deliveries.parseAnnouncement(`nope:${a},'; DROP TABLE x`)).toEqual({ ids: [a] });
  });
});
