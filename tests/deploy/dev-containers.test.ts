import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { eventually, freePort } from '@crm/testing';

/**
 * `npm run dev:containers` end to end: PostgreSQL, RabbitMQ and Redis in containers, the whole stack against them,
 * every service ready through the gateway, and the containers gone after Ctrl+C. It needs a Docker engine; where
 * none answers the suite is skipped and its title says why (the decision logic is unit-tested in @crm/testing).
 */
const root = path.resolve(__dirname, '../..');

/** Asked once, in a child (jest collects suites synchronously): testcontainers' own discovery of an engine. */
function dockerEngine(): { available: boolean; reason?: string } {
  const r = spawnSync(
    process.execPath,
    ['-e', "require('@crm/testing/dist/containers').dockerEngine().then((d) => console.log(JSON.stringify(d)))"],
    {
      cwd: root,
      encoding: 'utf8',
      timeout: 30_000,
    },
  );
  try {
    return JSON.parse(r.stdout.trim().split('\n').pop()!);
  } catch {
    return { available: false, reason: `the engine check failed: ${r.stderr.trim().split('\n')[0] || `exit ${r.status}`}` };
  }
}

function answers(url: string): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = net.connect({ host: u.hostname, port: Number(u.port) });
    s.setTimeout(1000, () => (s.destroy(), resolve(false)));
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

const docker = dockerEngine();
const title = 'npm run dev:containers';
// jest lists nothing of a file whose every test is skipped; the reason is printed so a skip never goes unnoticed.
if (!docker.available) console.warn(`${title}: skipped, no Docker engine: ${docker.reason}`);

(docker.available ? describe : describe.skip)(docker.available ? title : `${title} (skipped: no Docker engine: ${docker.reason})`, () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    if (child?.exitCode === null) child.kill('SIGTERM');
  });

  it('runs the stack against containers it started, ready through the gateway, and stops them on Ctrl+C', async () => {
    const port = await freePort();
    // The servers this run may use must not leak in: the script starts all three in containers only when unset.
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port) };
    for (const name of ['DATABASE_URL', 'AMQP_URL', 'REDIS_URL']) delete env[name];
    child = spawn(process.execPath, [path.join(root, 'scripts', 'dev-containers.mjs')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));

    // Image pulls on a fresh machine take a while; a script that gives up fails the test at once, with its output.
    const up = eventually(async () => output.includes('Messaging CRM is up'), 300_000, 500);
    const gaveUp = exited.then((code) => Promise.reject(new Error(`dev:containers exited (${code}) before the stack was up:\n${output}`)));
    await Promise.race([up, gaveUp]);
    const urls = [...output.matchAll(/in a container at (\S+):(\d+) /g)].map((m) => `tcp://${m[1]}:${m[2]}`);
    expect(urls).toHaveLength(3);

    const res = await fetch(`http://127.0.0.1:${port}/readyz`);
    const body = (await res.json()) as { status: string; checks: Record<string, boolean> };
    expect(res.status).toBe(200);
    expect(body.status).toBe('ready');
    expect(Object.keys(body.checks)).toEqual(expect.arrayContaining(['redis', 'identity', 'crm', 'messaging']));
    expect(Object.values(body.checks).every(Boolean)).toBe(true);

    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(output).toContain('Stopped the containers');
    for (const url of urls) expect(await answers(url)).toBe(false);
  }, 420_000);
});
