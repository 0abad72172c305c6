// Shared by `npm start` and `npm test`: install what is missing, build, and check the infrastructure.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

export const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

/**
 * BENCH_PROF=crm,gateway (diagnosis): node arguments that make the service `name` write a V8 CPU profile to bench/.prof
 * (git-ignored) when it stops, if BENCH_PROF names it; none otherwise. `npm start` and the benches' launchers use it;
 * `node bench/lib/profile-summary.mjs <file>` lists a profile's self time by package and function.
 */
export function profileArgs(name) {
  if (!(process.env.BENCH_PROF ?? '').split(',').includes(name)) return [];
  return ['--cpu-prof', `--cpu-prof-dir=${path.join(root, 'bench', '.prof')}`, `--cpu-prof-name=${name}-${Date.now()}.cpuprofile`];
}

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

/**
 * `npm test`'s lint, after build() (the build type-checks src; this checks the tests, against the built packages):
 * ESLint over the whole tree in two processes, Prettier and tsc over the tests (scripts/lint-tree.mjs; a third of
 * the CPU of linting workspace by workspace, which `npm run lint` still does), cached by turbo as one root task;
 * an error stops the run.
 */
export function lint() {
  console.log('› Linting (turbo run //#lint:tree)…');
  run('npx', ['turbo', 'run', '//#lint:tree', '--output-logs=errors-only'], {
    env: { TURBO_TELEMETRY_DISABLED: '1', TURBO_NO_UPDATE_NOTIFIER: '1', DO_NOT_TRACK: '1' },
  });
}

/**
 * What to do about PostgreSQL, RabbitMQ and Redis is decided in @crm/testing (infra-plan: pure and unit-tested;
 * containers: testcontainers), built TypeScript that these scripts load after build().
 */
export async function devInfra() {
  const [plan, containers] = await Promise.all([import('@crm/testing/dist/infra-plan.js'), import('@crm/testing/dist/containers.js')]);
  return { ...plan.default, ...containers.default };
}

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

/**
 * Say which of PostgreSQL, RabbitMQ and Redis is unreachable and how to start it, instead of a stack trace (and,
 * where a Docker engine answers, that `npm run dev:containers` would). `purpose: 'test'` goes on when Docker can
 * start the missing ones (jest's globalSetup does). Returns the URL of each server.
 */
export async function checkInfra({ purpose = 'start' } = {}) {
  const { SERVERS, serverUrls, checkOutcome, dockerEngine } = await devInfra();
  const urls = serverUrls(process.env);
  const answers = await Promise.all(SERVERS.map((s) => reachable(urls[s.key], s.defaultPort)));
  const down = SERVERS.filter((_, i) => !answers[i]).map((s) => s.key);
  // Docker is asked only when a server is missing: a stack whose servers answer starts without loading testcontainers.
  const docker = down.length ? await dockerEngine() : { available: false, reason: 'not asked' };
  const outcome = checkOutcome({ down, env: process.env, docker, purpose });
  for (const line of outcome.lines) (line.startsWith('✗') ? console.error : console.log)(line);
  if (!outcome.proceed) process.exit(1);
  return urls;
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
    writeFileSync(
      file,
      Object.entries(out)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n') + '\n',
      { mode: 0o600 },
    );
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
