// The bare pipeline's processes (see bare.mjs): the least any design with these parts does per inbound message.
// Not our services' code: plain node http, pg and amqplib, one statement or transaction per step, batches where the
// step allows them. Usage (spawned by bare.mjs): node bare-roles.mjs <ingress|relay|consumer> (settings in env).
import { createHmac, randomUUID } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(path.join(root, 'packages', 'events', 'package.json'));
const pg = require('pg');
const amqp = require('amqplib');
const { DATABASE_URL, AMQP_URL, QUEUE, PORT, HOOK_URL, HOOK_SECRET } = process.env;
const role = process.argv[2];
const ready = () => process.send?.('ready');

if (role === 'ingress') {
  // POST /inbound {from, content}: the message row and its event in one transaction, answered once committed.
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 8 });
  http
    .createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', async () => {
        try {
          const m = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          const id = randomUUID();
          const event = JSON.stringify({ id: randomUUID(), type: 'message.received', data: { messageId: id, from: m.from, content: m.content } });
          await pool.query({
            name: 'store',
            text: `WITH msg AS (INSERT INTO messages (id, sender, content) VALUES ($1, $2, $3))
                   INSERT INTO outbox (body) VALUES ($4)`,
            values: [id, m.from, m.content, event],
          });
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id }));
        } catch (err) {
          res.writeHead(500).end(String(err));
        }
      });
    })
    .listen(Number(PORT), '127.0.0.1', ready);
} else if (role === 'relay') {
  // LISTEN/NOTIFY wakes it; a batch is claimed, published with confirms, marked and committed in two round trips.
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  const conn = await amqp.connect(AMQP_URL, { noDelay: true });
  const ch = await conn.createConfirmChannel();
  let draining = false;
  let wanted = false;
  const drain = async () => {
    if (draining) return void (wanted = true);
    draining = true;
    do {
      wanted = false;
      for (;;) {
        const [, , claimed] = await client.query(
          'BEGIN; SET LOCAL synchronous_commit = off; SELECT seq, body FROM outbox WHERE published_at IS NULL ORDER BY seq LIMIT 500 FOR UPDATE SKIP LOCKED',
        );
        if (claimed.rows.length === 0) {
          await client.query('COMMIT');
          break;
        }
        await Promise.all(
          claimed.rows.map(
            (r) => new Promise((ok, fail) => ch.publish('', QUEUE, Buffer.from(r.body), { persistent: true }, (err) => (err ? fail(err) : ok()))),
          ),
        );
        await client.query(
          `UPDATE outbox SET published_at = now() WHERE seq = ANY('{${claimed.rows.map((r) => r.seq).join(',')}}'::bigint[]); COMMIT`,
        );
        if (claimed.rows.length < 500) break;
      }
    } while (wanted);
    draining = false;
  };
  client.on('notification', () => void drain());
  await client.query('LISTEN outbox');
  setInterval(() => void drain(), 2000);
  ready();
} else if (role === 'consumer') {
  // Up to 100 deliveries (or what came within 5 ms) in one transaction with their idempotency rows, each POSTed as a
  // signed webhook once committed, then acked together.
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
  const conn = await amqp.connect(AMQP_URL, { noDelay: true });
  const ch = await conn.createChannel();
  await ch.prefetch(200);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const hook = new URL(HOOK_URL);
  const key = Buffer.from(HOOK_SECRET.replace(/^whsec_/, ''), 'base64');
  const post = (body, id) =>
    new Promise((ok) => {
      const ts = Math.floor(Date.now() / 1000);
      const sig = createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64');
      const r = http.request(
        {
          host: hook.hostname,
          port: hook.port,
          path: hook.pathname,
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'webhook-id': id,
            'webhook-timestamp': String(ts),
            'webhook-signature': `v1,${sig}`,
          },
        },
        (res) => res.resume().on('end', ok),
      );
      r.on('error', ok);
      r.end(body);
    });
  let pending = [];
  let timer;
  let running = false;
  const flush = async () => {
    clearTimeout(timer);
    timer = undefined;
    if (running || pending.length === 0) return;
    running = true;
    const batch = pending.splice(0, 100);
    const events = batch.map((m) => JSON.parse(m.content.toString('utf8')));
    const { rows } = await pool.query({
      name: 'claim',
      text: `WITH fresh AS (INSERT INTO processed (event_id) SELECT unnest($1::uuid[]) ON CONFLICT DO NOTHING RETURNING event_id)
             INSERT INTO deliveries (event_id) SELECT event_id FROM fresh RETURNING event_id`,
      values: [events.map((e) => e.id)],
    });
    const fresh = new Set(rows.map((r) => r.event_id));
    await Promise.all(events.filter((e) => fresh.has(e.id)).map((e) => post(JSON.stringify(e), e.id)));
    ch.ack(batch[batch.length - 1], true);
    running = false;
    if (pending.length >= 100) void flush();
    else if (pending.length > 0) timer ??= setTimeout(() => void flush(), 5);
  };
  await ch.consume(QUEUE, (m) => {
    pending.push(m);
    if (pending.length >= 100) void flush();
    else timer ??= setTimeout(() => void flush(), 5);
  });
  ready();
} else {
  throw new Error(`unknown role ${role}`);
}
