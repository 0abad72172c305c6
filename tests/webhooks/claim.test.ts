import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { migrate, type Pool } from '@crm/db';
import { createTestDatabase, eventually, type TestDatabase, testPool } from '@crm/testing';
import * as deliveries from '../../services/webhooks/src/db/deliveries.repo';
import { connectPatiently } from '../support/patient-client';

// The delivery queue's statements against a real database: the fan-out announces exactly the rows it
// inserted, in NOTIFY payloads under PostgreSQL's 8,000-byte limit, and the claim honours the lease and the
// per-endpoint bound.
describe('delivery queue statements', () => {
  /** The test's own channel: a NOTIFY on it marks how far the listener has heard (see announcementsHeard). */
  const MARKER_CHANNEL = 'webhooks_claim_test_marker';
  let db: TestDatabase;
  let pool: Pool;
  let listener: PgClient;
  const payloads: string[] = [];
  const markers: string[] = [];
  const orgId = randomUUID();

  beforeAll(async () => {
    db = await createTestDatabase('webhooks_claim');
    pool = testPool(db.url, 4);
    await migrate(pool, path.join(__dirname, '../../services/webhooks/migrations'));
    listener = await connectPatiently(db.url);
    listener.on('notification', (m) => {
      if (m.channel === deliveries.DUE_CHANNEL) payloads.push(m.payload ?? '');
      if (m.channel === MARKER_CHANNEL) markers.push(m.payload ?? '');
    });
    await listener.query(`LISTEN ${deliveries.DUE_CHANNEL}`);
    await listener.query(`LISTEN ${MARKER_CHANNEL}`);
  });
  afterAll(async () => {
    await listener?.end();
    await pool?.end();
    await db?.drop();
  });

  const addHook = async (events: string[], org = orgId) => {
    const id = randomUUID();
    await pool.query(`INSERT INTO webhook_settings (id, org_id, url, events, secret_enc) VALUES ($1, $2, 'http://127.0.0.1/x', $3, 'sealed')`, [
      id,
      org,
      events,
    ]);
    return id;
  };
  const events = (n: number, type: string, prefix: string, org = orgId): deliveries.FanOutEvent[] =>
    Array.from({ length: n }, (_, i) => ({ orgId: org, eventId: `${prefix}-${i}`, type, payload: '{}' }));
  /**
   * Resolves once the listener has heard every announcement committed before this call. PostgreSQL delivers a
   * session's notifications in the order their transactions committed, whatever their channel, so a marker sent now
   * arrives after all of them: what is in `payloads` then is everything that was announced, and nothing more comes.
   */
  const announcementsHeard = async () => {
    const marker = randomUUID();
    await pool.query('SELECT pg_notify($1, $2)', [MARKER_CHANNEL, marker]);
    await eventually(async () => markers.includes(marker), 5_000, 5);
  };
  /** Forget what was announced so far, late announcements of earlier statements included. */
  const listenAfresh = async () => {
    await announcementsHeard();
    payloads.length = 0;
  };

  it('announces the ids it inserted, 200 per notification, each payload under 8,000 bytes; a repeated batch announces nothing', async () => {
    const hook = await addHook(['contact.created']);
    await addHook(['contact.updated']);
    const otherOrgHook = await addHook(['contact.created'], randomUUID());
    await listenAfresh();
    expect(await deliveries.fanOut(pool, events(450, 'contact.created', 'a'))).toBe(450);
    await announcementsHeard();
    expect(payloads).toHaveLength(3);
    for (const p of payloads) expect(Buffer.byteLength(p)).toBeLessThan(8_000);
    const announced = payloads.flatMap((p) => deliveries.parseAnnouncement(p).ids);
    expect(payloads.every((p) => deliveries.parseAnnouncement(p).webhookId === hook)).toBe(true);
    const { rows } = await pool.query<{ id: string; webhook_id: string }>('SELECT id, webhook_id FROM webhook_deliveries');
    expect(rows.every((r) => r.webhook_id === hook && r.webhook_id !== otherOrgHook)).toBe(true);
    expect(announced.sort()).toEqual(rows.map((r) => r.id).sort());

    await listenAfresh();
    expect(await deliveries.fanOut(pool, events(450, 'contact.created', 'a'))).toBe(0);
    await announcementsHeard();
    expect(payloads).toHaveLength(0);
  });

  it('claims announced ids once: a second claim of the same ids, by any worker, finds them leased', async () => {
    const hook = await addHook(['message.sent']);
    await listenAfresh();
    await deliveries.fanOut(pool, events(5, 'message.sent', 'b'));
    await announcementsHeard();
    const ids = payloads.flatMap((p) => deliveries.parseAnnouncement(p).ids);
    const claim = (busy = new Map<string, number>()) => deliveries.claim(pool, { ids, limit: 50, leaseMs: 60_000, perEndpoint: 8, busy, scan: 0 });
    const [a, b] = await Promise.all([claim(), claim()]);
    expect([...a.rows, ...b.rows].map((r) => r.id).sort()).toEqual([...ids].sort());
    expect(a.rows.every((r) => r.webhook_id === hook && r.url === 'http://127.0.0.1/x' && r.secret_enc === 'sealed')).toBe(true);
    const again = await claim();
    expect(again).toEqual({ rows: [], scanned: 0 });
  });

  it('takes no more rows of an endpoint than its free slots, and reports the due rows it left', async () => {
    // Only this test's rows are due.
    await pool.query(`UPDATE webhook_deliveries SET status = 'succeeded', next_attempt_at = NULL`);
    const slow = await addHook(['conversation.created']);
    const other = await addHook(['conversation.created']);
    await listenAfresh();
    await deliveries.fanOut(pool, events(20, 'conversation.created', 'c'));
    await announcementsHeard();
    const ids = payloads.flatMap((p) => deliveries.parseAnnouncement(p).ids);
    const base = { limit: 50, leaseMs: 60_000, perEndpoint: 8 };

    // Announced ids: the slow endpoint has 6 of 8 slots busy, so 2 of its 20 are taken; every one of the
    // other endpoint's fits; the 18 left are reported (scanned) so the worker looks again when a slot frees.
    const byIds = await deliveries.claim(pool, { ...base, ids, scan: 0, busy: new Map([[slow, 6]]) });
    const count = (rows: deliveries.ClaimedDelivery[], hook: string) => rows.filter((r) => r.webhook_id === hook).length;
    expect(count(byIds.rows, slow)).toBe(2);
    expect(count(byIds.rows, other)).toBe(8);
    expect(byIds.scanned).toBe(40);

    // The general claim skips an endpoint at its bound altogether, and takes the free slots of the others.
    const none = await deliveries.claim(pool, {
      ...base,
      scan: 100,
      busy: new Map([
        [slow, 8],
        [other, 8],
      ]),
    });
    expect(none).toEqual({ rows: [], scanned: 0 });
    const some = await deliveries.claim(pool, {
      ...base,
      scan: 100,
      busy: new Map([
        [slow, 7],
        [other, 8],
      ]),
    });
    expect(count(some.rows, slow)).toBe(1);
    expect(count(some.rows, other)).toBe(0);
    expect(some.scanned).toBe(18);
    // And never more than the instance's own free slots.
    const limited = await deliveries.claim(pool, { ...base, limit: 3, scan: 100, busy: new Map() });
    expect(limited.rows).toHaveLength(3);
  });

  it('claims by endpoint: the oldest due rows of each (retries and new alike), at most n of each, none of an endpoint switched off', async () => {
    await pool.query(`UPDATE webhook_deliveries SET status = 'succeeded', next_attempt_at = NULL`);
    const a = await addHook(['appointment.created']);
    const b = await addHook(['appointment.created']);
    const off = await addHook(['appointment.created']);
    await pool.query('UPDATE webhook_settings SET active = false WHERE id = $1', [off]);
    await deliveries.fanOut(pool, events(5, 'appointment.created', 'e'));
    // One of a's rows is a retry that fell due a minute ago: it goes first; another is not due yet.
    const { rows: aRows } = await pool.query<{ id: string }>('SELECT id FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY event_id', [a]);
    await pool.query(`UPDATE webhook_deliveries SET next_attempt_at = now() - interval '1 minute', attempts = 1 WHERE id = $1`, [aRows[4].id]);
    await pool.query(`UPDATE webhook_deliveries SET next_attempt_at = now() + interval '1 hour' WHERE id = $1`, [aRows[3].id]);

    const first = await deliveries.claimEndpoints(
      pool,
      new Map([
        [a, 2],
        [b, 10],
        [off, 10],
      ]),
      60_000,
    );
    const of = (rows: deliveries.ClaimedDelivery[], hook: string) => rows.filter((r) => r.webhook_id === hook);
    expect(of(first, a)).toHaveLength(2);
    expect(of(first, a).map((r) => r.id)).toContain(aRows[4].id);
    expect(of(first, b)).toHaveLength(5);
    expect(of(first, off)).toHaveLength(0);
    expect(first.every((r) => r.url === 'http://127.0.0.1/x' && r.secret_enc === 'sealed')).toBe(true);
    // Claimed rows are leased: the next claim takes what is left and due (2 of a's), nothing twice.
    const second = await deliveries.claimEndpoints(
      pool,
      new Map([
        [a, 10],
        [b, 10],
      ]),
      60_000,
    );
    expect(second.map((r) => r.webhook_id)).toEqual([a, a]);
    expect(new Set([...first, ...second].map((r) => r.id)).size).toBe(first.length + second.length);
    expect(await deliveries.claimEndpoints(pool, new Map(), 60_000)).toEqual([]);
  });

  it('plans the deliveries a batch calls for (a read), then writes each in its state: succeeded with its attempt, leased, or due and announced', async () => {
    await pool.query(`UPDATE webhook_deliveries SET status = 'succeeded', next_attempt_at = NULL`);
    const first = await addHook(['contact.deleted']);
    const second = await addHook(['contact.deleted']);
    await addHook(['contact.deleted'], randomUUID());
    await pool.query(`UPDATE webhook_settings SET failing_since = now() - interval '1 hour' WHERE id = $1`, [first]);
    await listenAfresh();
    // 3 events (one of them twice in the batch) to 2 endpoints of the org: 6 deliveries, oldest event first, the
    // org's endpoints in the order they were made; nothing is written yet.
    const batch = [...events(3, 'contact.deleted', 'k'), events(2, 'contact.deleted', 'k')[1]];
    const targets = await deliveries.planFanOut(pool, batch);
    expect(targets.map((t) => [t.event, t.webhook_id])).toEqual([
      [0, first],
      [0, second],
      [1, first],
      [1, second],
      [2, first],
      [2, second],
    ]);
    expect(targets.every((t) => t.url === 'http://127.0.0.1/x' && t.secret_enc === 'sealed')).toBe(true);
    expect((await pool.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_id LIKE 'k-%'`)).rows[0].n).toBe(0);

    const result = {
      ok: true,
      statusCode: 204,
      durationMs: 7,
      error: null,
      responseBody: 'thanks',
      responseBodyTruncated: false,
      startedAt: new Date(),
    };
    const states: deliveries.NewDeliveryState[] = ['succeeded', 'leased', 'due', 'succeeded', 'due', 'leased'];
    const rows = targets.map((t, i): deliveries.NewDelivery => ({
      id: randomUUID(),
      event: batch[t.event],
      webhookId: t.webhook_id,
      state: states[i],
      result: states[i] === 'succeeded' ? result : undefined,
    }));
    expect((await deliveries.insertFanOut(pool, rows, 60_000)).size).toBe(6);
    const { rows: written } = await pool.query(
      `SELECT d.id, d.status, d.attempts, d.last_status_code, d.delivered_at IS NOT NULL AS delivered, d.updated_at = d.created_at AS once,
              next_attempt_at > now() + interval '50 seconds' AS leased, next_attempt_at <= now() AS due,
              (SELECT json_agg(json_build_object('attempt', a.attempt, 'ok', a.ok, 'status', a.status_code, 'body', a.response_body, 'ms', a.duration_ms))
                 FROM webhook_attempts a WHERE a.delivery_id = d.id) AS attempts_log
         FROM webhook_deliveries d WHERE event_id LIKE 'k-%'`,
    );
    const byId = new Map(written.map((r) => [r.id, r]));
    for (const row of rows) {
      const w = byId.get(row.id);
      if (row.state === 'succeeded') {
        expect(w).toMatchObject({ status: 'succeeded', attempts: 1, last_status_code: 204, delivered: true, once: true, leased: null, due: null });
        expect(w.attempts_log).toEqual([{ attempt: 1, ok: true, status: 204, body: 'thanks', ms: 7 }]);
      } else {
        expect(w).toMatchObject({
          status: 'pending',
          attempts: 0,
          delivered: false,
          leased: row.state === 'leased',
          due: row.state === 'due',
          attempts_log: null,
        });
      }
    }
    // A success closes the endpoint's failure run; only the due rows are announced, and a claim takes only them.
    expect((await pool.query('SELECT failing_since FROM webhook_settings WHERE id = $1', [first])).rows[0].failing_since).toBeNull();
    await announcementsHeard();
    const announced = payloads.flatMap((p) => deliveries.parseAnnouncement(p).ids);
    const due = rows.filter((r) => r.state === 'due').map((r) => r.id);
    expect(announced.sort()).toEqual([...due].sort());
    const claimed = await deliveries.claimEndpoints(
      pool,
      new Map([
        [first, 10],
        [second, 10],
      ]),
      60_000,
    );
    expect(claimed.map((r) => r.id).sort()).toEqual([...due].sort());

    // An endpoint switched off between the plan and the write keeps only its success; a deleted one gets nothing,
    // and the others' rows are written all the same.
    const [on, off, gone] = [await addHook(['contact.merged']), await addHook(['contact.merged']), await addHook(['contact.merged'])];
    const later = events(2, 'contact.merged', 'm');
    const planned = await deliveries.planFanOut(pool, later);
    expect(planned).toHaveLength(6);
    await pool.query('UPDATE webhook_settings SET active = false WHERE id = $1', [off]);
    await pool.query('DELETE FROM webhook_settings WHERE id = $1', [gone]);
    const late = planned.map((t): deliveries.NewDelivery => ({
      id: randomUUID(),
      event: later[t.event],
      webhookId: t.webhook_id,
      state: t.event === 0 ? 'succeeded' : 'due',
      result: t.event === 0 ? result : undefined,
    }));
    await listenAfresh();
    const lateWritten = await deliveries.insertFanOut(pool, late, 60_000);
    const writtenFor = (hook: string) => late.filter((r) => r.webhookId === hook && lateWritten.has(r.id)).map((r) => r.state);
    expect(writtenFor(on)).toEqual(['succeeded', 'due']);
    expect(writtenFor(off)).toEqual(['succeeded']);
    expect(writtenFor(gone)).toEqual([]);
    // Only the due row written is announced.
    await announcementsHeard();
    expect(payloads.map((p) => deliveries.parseAnnouncement(p))).toEqual([
      { webhookId: on, ids: [late.find((r) => r.webhookId === on && r.state === 'due')!.id] },
    ]);

    // A redelivered batch plans nothing; a delivery planned twice (two instances) is written once.
    expect(await deliveries.planFanOut(pool, batch)).toEqual([]);
    await listenAfresh();
    expect((await deliveries.insertFanOut(pool, [{ ...rows[2], id: randomUUID() }], 60_000)).size).toBe(0);
    await announcementsHeard();
    expect(payloads).toHaveLength(0);
  });
});
