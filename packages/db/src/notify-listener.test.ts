import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { NotifyListener } from './notify-listener';

// Every listener of a process on one database shares one LISTEN connection: a service's claim loops and timers
// cost PostgreSQL one connection, not one each, and all come back together after the connection is lost.
const baseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const silent = { warn: () => undefined };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function waitFor(check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out');
    await sleep(20);
  }
}

describe('NotifyListener: one shared connection per database', () => {
  const app = `listen_test_${randomBytes(4).toString('hex')}`;
  const url = `${baseUrl}${baseUrl.includes('?') ? '&' : '?'}application_name=${app}`;
  const admin = new Client({ connectionString: baseUrl });
  const backends = async () => Number((await admin.query('SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1', [app])).rows[0].n);

  beforeAll(() => admin.connect());
  afterAll(() => admin.end());

  it('three listeners on two channels hold one connection, each hears its channel, all reconnect after it is terminated', async () => {
    const chA = `${app}_a`;
    const chB = `${app}_b`;
    const heard: string[] = [];
    const connects: string[] = [];
    const make = (name: string, channel: string) =>
      new NotifyListener({
        name,
        databaseUrl: url,
        channel,
        log: silent,
        minBackoffMs: 20,
        onNotification: (p) => heard.push(`${name}:${p}`),
        onConnected: () => connects.push(name),
      });
    const listeners = [make('a1', chA), make('a2', chA), make('b1', chB)];
    await Promise.all(listeners.map((l) => l.start()));
    expect(await backends()).toBe(1);
    expect(connects.sort()).toEqual(['a1', 'a2', 'b1']);

    await admin.query('SELECT pg_notify($1, $2)', [chA, 'x']);
    await waitFor(() => heard.length >= 2);
    await sleep(50);
    expect(heard.sort()).toEqual(['a1:x', 'a2:x']);

    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [app]);
    await waitFor(() => connects.length === 6);
    expect(await backends()).toBe(1);
    await admin.query('SELECT pg_notify($1, $2)', [chB, 'y']);
    await waitFor(() => heard.includes('b1:y'));

    // The last one to stop closes the connection; one stopping earlier leaves its channel to the others.
    await listeners[0].stop();
    await admin.query('SELECT pg_notify($1, $2)', [chA, 'z']);
    await waitFor(() => heard.includes('a2:z'));
    expect(heard).not.toContain('a1:z');
    await Promise.all(listeners.slice(1).map((l) => l.stop()));
    await waitFor(async () => (await backends()) === 0);
  });
});
