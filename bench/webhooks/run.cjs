// bench/webhooks: the delivery worker behind one busy endpoint, alone (no HTTP, no broker): deliveries are fanned
// out at 1,000 a second (--rate), the endpoint (a stand-in sender, 8 ms an attempt, 8 at a time: about 1,000 a second) keeps a
// backlog, and the run reports what each delivery cost: CPU of the database's PostgreSQL backends, CPU of this
// process (the worker), and transactions committed. `--tree` runs another checkout's built worker (an A/B between
// commits: `git worktree add /tmp/base <commit>`, build it, then run this once per tree, alternating). The batches go
// through the worker's own fan-out when the tree has one (as the service's event consumer does: what the worker has
// room for it keeps and sends at once), else through the repository's (everything announced).
//
// Usage: node bench/webhooks/run.cjs [--tree <checkout>] [--deliveries 15000] [--rate 1000] [--batch 200]
const path = require('path');
const { parseArgs } = require('util');
const { values: args } = parseArgs({
  options: {
    tree: { type: 'string', default: path.resolve(__dirname, '..', '..') },
    deliveries: { type: 'string', default: '15000' },
    rate: { type: 'string', default: '1000' },
    batch: { type: 'string', default: '200' },
  },
});
const tree = path.resolve(args.tree);
const N = Number(args.deliveries);
const RATE = Number(args.rate);
const BATCH = Number(args.batch);
const fs = require('fs');
const { randomUUID, randomBytes } = require('crypto');
const { createPool, migrate } = require(tree + '/packages/db/dist');
const { SecretBox } = require(tree + '/packages/crypto/dist');
const { createLogger } = require(tree + '/packages/logger/dist');
const deliveries = require(tree + '/services/webhooks/dist/db/deliveries.repo');
const { DeliveryWorker } = require(tree + '/services/webhooks/dist/delivery/worker');
const { secretAad } = require(tree + '/services/webhooks/dist/deps');
const { generateSecret } = require(tree + '/services/webhooks/dist/domain/signing');
const pg = require(tree + '/node_modules/pg');
const cpu = (pid) => {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return 0;
  }
};
(async () => {
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  const db = `bench_webhooks_${Date.now().toString(36)}`;
  await admin.query(`CREATE DATABASE ${db}`);
  const url = Object.assign(new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'), { pathname: `/${db}` }).toString();
  let worker;
  try {
    const pool = createPool(url, 10);
    await migrate(pool, path.join(tree, 'services/webhooks/migrations'));
    const box = SecretBox.fromEnv(randomBytes(32).toString('base64'));
    const org = randomUUID(),
      hook = randomUUID();
    await pool.query(
      `INSERT INTO webhook_settings (id, org_id, url, events, secret_enc) VALUES ($1, $2, 'http://127.0.0.1/x', '{message.received}', $3)`,
      [hook, org, box.encrypt(generateSecret(), secretAad(org, hook))],
    );
    let sent = 0;
    const sender = {
      async send() {
        const startedAt = new Date();
        await new Promise((r) => setTimeout(r, 8));
        sent++;
        return { ok: true, statusCode: 200, durationMs: 8, error: null, responseBody: '', responseBodyTruncated: false, startedAt };
      },
    };
    worker = new DeliveryWorker({
      pool,
      databaseUrl: url,
      log: createLogger('bench', 'silent'),
      box,
      sender,
      schedule: [60000],
      disableAfterMs: 864e5,
      concurrency: 50,
      endpointConcurrency: 8,
      pollMs: 1000,
      leaseMs: 40000,
      retentionMs: 864e5,
    });
    await worker.start();
    await new Promise((r) => setTimeout(r, 500));
    const pids = async () => (await admin.query('SELECT pid FROM pg_stat_activity WHERE datname = $1', [db])).rows.map((r) => r.pid);
    const p0 = await pids();
    const c0 = p0.reduce((a, p) => a + cpu(p), 0);
    const u0 = process.cpuUsage();
    const t0 = Date.now();
    // RATE a second in batches of BATCH (the endpoint takes about 8 × 125 = 1,000 a second: at 1,000 a backlog builds
    // and stays; above it, it grows through the run)
    const fanOut = typeof worker.fanOut === 'function' ? (events) => worker.fanOut(events) : (events) => deliveries.fanOut(pool, events);
    for (let i = 0; i < N; i += BATCH) {
      const due = t0 + ((i + BATCH) * 1000) / RATE;
      await fanOut(Array.from({ length: BATCH }, () => ({ orgId: org, eventId: randomUUID(), type: 'message.received', payload: '{}' })));
      await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
    }
    while (sent < N) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
    const p1 = await pids();
    const c1 = p1.reduce((a, p) => a + cpu(p), 0);
    const u = process.cpuUsage(u0);
    const xact = (await admin.query('SELECT xact_commit FROM pg_stat_database WHERE datname = $1', [db])).rows[0].xact_commit;
    const commit = require('child_process').execFileSync('git', ['-C', tree, 'rev-parse', '--short', 'HEAD']).toString().trim();
    console.log(
      `${commit}: ${N} at ${RATE}/s offered in batches of ${BATCH}, delivered in ${((Date.now() - t0) / 1000).toFixed(1)} s; pg ${((c1 - c0) / N).toFixed(3)} ms/delivery (backends ${p0.length}->${p1.length}); worker process ${((u.user + u.system) / 1000 / N).toFixed(3)} ms/delivery; commits ~${(xact / N).toFixed(2)}/delivery`,
    );
    await worker.stop();
    worker = undefined;
    await pool.end();
  } catch (e) {
    console.error(e);
    process.exitCode = 1;
  } finally {
    if (worker) await worker.stop().catch(() => {});
    await admin.query(`DROP DATABASE ${db} WITH (FORCE)`);
    await admin.end();
  }
})();
