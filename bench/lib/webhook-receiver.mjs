// A webhook receiver as an integrator would run it: verifies every Standard Webhooks signature, and hands each
// event to `onEvent(event, receivedAtMs)` (performance clock of this process) once per `webhook-id`. Delivery is at
// least once: an attempt whose outcome was not recorded (the sender's database went away after the POST) is made
// again with the same `webhook-id`, which Standard Webhooks receivers skip; those are counted in `duplicateIds`.
// The same event under two ids would reach onEvent twice, so callers still see anything applied twice.
import { createHmac } from 'node:crypto';
import http from 'node:http';

export function webhookReceiver(onEvent) {
  const stats = { received: 0, badSignatures: 0, duplicateIds: 0 };
  const seen = new Set();
  let key;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const now = performance.now();
      const body = Buffer.concat(chunks).toString('utf8');
      res.writeHead(204).end();
      stats.received++;
      const id = req.headers['webhook-id'];
      const expected = `v1,${createHmac('sha256', key).update(`${id}.${req.headers['webhook-timestamp']}.${body}`).digest('base64')}`;
      if (
        !String(req.headers['webhook-signature'] ?? '')
          .split(' ')
          .includes(expected)
      )
        stats.badSignatures++;
      if (seen.has(id)) {
        stats.duplicateIds++;
        return;
      }
      seen.add(id);
      onEvent(JSON.parse(body), now);
    });
  });
  return {
    stats,
    /** The `whsec_…` secret the webhook was created with. */
    setSecret(secret) {
      key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
    },
    async listen() {
      await new Promise((r) => server.listen(0, '127.0.0.1', r));
      return `http://127.0.0.1:${server.address().port}/webhook`;
    },
    close() {
      server.closeAllConnections?.();
      server.close();
    },
  };
}
