// Shared by `npm start` and `npm test`: install what is missing, build, and check the infrastructure.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

export const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

export function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...opts, env: { ...process.env, ...opts.env } });
  if (r.status !== 0) {
    console.error(`\n✗ ${cmd} ${args.join(' ')} failed (exit ${r.status ?? r.signal})`);
    process.exit(r.status || 1);
  }
}

/**
 * Install when node_modules is missing or older than package-lock.json. With a lockfile it is `npm ci`:
 * exactly the locked versions, and the lockfile is never rewritten (`npm install` on a fresh clone
 * re-resolved the optional platform packages and left a newcomer with a modified tracked file).
 */
export function ensureInstalled() {
  const marker = path.join(root, 'node_modules', '.package-lock.json');
  const lock = path.join(root, 'package-lock.json');
  const stale = !existsSync(marker) || (existsSync(lock) && statSync(lock).mtimeMs > statSync(marker).mtimeMs + 1000);
  if (!stale) return;
  const args = existsSync(lock) ? ['ci'] : ['install'];
  console.log(`› Installing dependencies (npm ${args[0]})…`);
  run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error']);
}

/** `git status` of tracked files, or null outside a git work tree (a tarball, a Docker build). */
export function trackedChanges() {
  const r = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.split('\n').filter(Boolean) : null;
}

/**
 * Fail when the run changed a tracked file that was clean before it (install, build and tests must leave
 * the tree as they found it). Changes the developer already had are theirs and are ignored.
 */
export function checkTreeUnchanged(before) {
  const after = trackedChanges();
  if (before === null || after === null) return true;
  const changed = after.filter((line) => !before.includes(line));
  if (changed.length === 0) return true;
  console.error(`\n✗ The run changed tracked files (it must leave the tree as it found it):\n${changed.map((l) => `  ${l}`).join('\n')}`);
  return false;
}

export function build() {
  console.log('› Building (turbo run build)…');
  run('npx', ['turbo', 'run', 'build', '--output-logs=errors-only'], {
    env: { TURBO_TELEMETRY_DISABLED: '1', TURBO_NO_UPDATE_NOTIFIER: '1', DO_NOT_TRACK: '1' },
  });
}

export const infra = {
  postgres: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  rabbitmq: process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
  redis: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
};

const HOW_TO_START = {
  postgres: "start it with `pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start` (Debian), `brew services start postgresql`, or `docker compose up -d postgres`; or point DATABASE_URL at a running server",
  rabbitmq: 'start it with `rabbitmq-server -detached`, `brew services start rabbitmq`, or `docker compose up -d rabbitmq`; or point AMQP_URL at a running broker',
  redis: 'start it with `redis-server --daemonize yes`, `brew services start redis`, or `docker compose up -d redis`; or point REDIS_URL at a running server',
};

function reachable(url, defaultPort) {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: u.hostname, port: Number(u.port || defaultPort) });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Say which of PostgreSQL, RabbitMQ and Redis is unreachable and how to start it, instead of a stack trace. */
export async function checkInfra({ dockerFallback = false } = {}) {
  const checks = await Promise.all([
    reachable(infra.postgres, 5432).then((ok) => ['postgres', 'PostgreSQL', infra.postgres, ok]),
    reachable(infra.rabbitmq, 5672).then((ok) => ['rabbitmq', 'RabbitMQ', infra.rabbitmq, ok]),
    reachable(infra.redis, 6379).then((ok) => ['redis', 'Redis', infra.redis, ok]),
  ]);
  const down = checks.filter((c) => !c[3]);
  const docker = existsSync('/var/run/docker.sock') || !!process.env.DOCKER_HOST;
  if (down.length && dockerFallback && docker) {
    console.log(`› ${down.map((c) => c[1]).join(', ')} not reachable: tests will start them with testcontainers.`);
    return;
  }
  for (const [key, name, url] of down) {
    const u = new URL(url);
    console.error(`✗ ${name} is not reachable at ${u.hostname}:${u.port || ''}: ${HOW_TO_START[key]}.`);
  }
  if (down.length) process.exit(1);
}

/**
 * Development secrets: generated once into the git-ignored .local/secrets.env so restarts keep working
 * tokens and readable encrypted data. Production must set JWT_SECRET, ENCRYPTION_KEY and the internal keys itself.
 */
export function devSecrets() {
  const file = path.join(root, '.local', 'secrets.env');
  const out = {};
  if (existsSync(file)) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const m = /^([A-Z_]+)=(.*)$/.exec(line.trim());
      if (m) out[m[1]] = m[2];
    }
  }
  let created = false;
  if (!out.JWT_SECRET) {
    out.JWT_SECRET = randomBytes(32).toString('hex');
    created = true;
  }
  if (!out.ENCRYPTION_KEY) {
    out.ENCRYPTION_KEY = randomBytes(32).toString('base64');
    created = true;
  }
  if (!out.INTERNAL_AUTH_SEED) {
    out.INTERNAL_AUTH_SEED = randomBytes(32).toString('hex');
    created = true;
  }
  if (created) {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, Object.entries(out).map(([k, v]) => `${k}=${v}`).join('\n') + '\n', { mode: 0o600 });
    console.log(`› Generated development secrets into ${path.relative(root, file)} (git-ignored; kept across restarts).`);
  }
  return {
    JWT_SECRET: process.env.JWT_SECRET ?? out.JWT_SECRET,
    ENCRYPTION_KEY: process.env.ENCRYPTION_KEY ?? out.ENCRYPTION_KEY,
    // The internal credential's development keys (production sets SERVICE_PRIVATE_KEY and SERVICE_PUBLIC_KEYS instead).
    ...(process.env.SERVICE_PRIVATE_KEY ? {} : { INTERNAL_AUTH_SEED: process.env.INTERNAL_AUTH_SEED ?? out.INTERNAL_AUTH_SEED }),
  };
}

/**
 * The browser test drives Debian's chromium. Install it when missing (as root with apt); elsewhere set
 * CHROMIUM_PATH to an installed Chromium or Chrome.
 */
export function ensureChromium() {
  const wanted = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (existsSync(wanted)) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !existsSync('/usr/bin/apt-get')) {
    console.error(`✗ Chromium not found at ${wanted}: install it (Debian: apt-get install chromium) or set CHROMIUM_PATH.`);
    process.exit(1);
  }
  console.log('› Installing chromium for the browser test (apt-get)…');
  run('apt-get', ['update', '-qq']);
  run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'chromium'], { env: { DEBIAN_FRONTEND: 'noninteractive' } });
}
