import { randomBytes } from 'node:crypto';
// What the whole-stack benchmarks share: free ports, per-run database names, service processes started
// from their built dist, and waiting for the gateway's /readyz.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { profileArgs } from '../../scripts/lib.mjs';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Ports for the processes a run starts come from 16000-19999, below the OS's ephemeral range (32768 and up on Linux).
 * A port the OS hands out (listen on 0) is free only until it is closed again, and a run's services open dozens of
 * connections while they start: one of them took a port picked this way before its service listened on it
 * (EADDRINUSE, bench/gateway, 2026-12-07). The range is also above `npm start`'s fixed ports (scripts/ports.mjs, 15051
 * and up) and below the test suite's (packages/testing, 20000 and up), so a bench beside either takes none of theirs.
 */
const BENCH_PORTS = { base: 16_000, span: 4_000 };
let nextPort;

/** A port in the benches' range nothing listens on now; each call of a run gets another one. */
export async function freePort() {
  nextPort ??= Math.floor(Math.random() * BENCH_PORTS.span);
  for (let i = 0; i < BENCH_PORTS.span; i++) {
    const port = BENCH_PORTS.base + (nextPort++ % BENCH_PORTS.span);
    if (await canBind(port)) return port;
  }
  throw new Error(`no free port in ${BENCH_PORTS.base}-${BENCH_PORTS.base + BENCH_PORTS.span - 1}`);
}

function canBind(port) {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** `bench_<name>_<run>` on the server of `pgUrl`, so a run's databases can be found and dropped. */
export const benchDbUrl = (pgUrl, run) => (name) => Object.assign(new URL(pgUrl), { pathname: `/bench_${name}_${run}` }).toString();

/** Service processes of one run; their logs go to our stderr with the service's name in front. */
export function processGroup() {
  const children = [];
  return {
    children,
    /** `main`: another entry of the service's build than dist/main.js (e.g. the sandbox network's). */
    launch(name, env, { main: entry = path.join('services', name, 'dist', 'main.js') } = {}) {
      const main = path.join(root, entry);
      if (!existsSync(main)) throw new Error(`${main} missing: run npm run build`);
      // METRICS_PORT 0: instances of one service (and a running `npm start`) must not fight over its fixed metrics port.
      // BENCH_PROF=gateway,messaging: those processes write a V8 CPU profile (scripts/lib.mjs profileArgs).
      const prof = profileArgs(name);
      const child = spawn(process.execPath, [...prof, main], {
        cwd: root,
        env: { ...process.env, METRICS_PORT: '0', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout.on('data', (d) => process.stderr.write(`[${name}] ${d}`));
      child.stderr.on('data', (d) => process.stderr.write(`[${name}] ${d}`));
      children.push(child);
      return child;
    },
    /** SIGTERM in reverse start order, each awaited, so services shut down cleanly before their callees. */
    async stopAll() {
      for (const c of children.splice(0).reverse()) {
        c.kill('SIGTERM');
        await new Promise((r) => (c.exitCode !== null ? r() : c.once('exit', r)));
      }
    },
  };
}

export async function waitReady(url, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  let last = 'no answer';
  for (;;) {
    try {
      const res = await fetch(`${url}/readyz`);
      if (res.ok) return;
      last = await res.text();
    } catch (err) {
      last = err.message;
    }
    if (Date.now() > until) throw new Error(`stack did not become ready: ${last}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Sign up an organization through the gateway (the stack runs with SIGNUP_ENABLED); returns `{token, user, …}`. */
export async function signupOrg(url, run, orgName) {
  const res = await fetch(`${url}/api/v1/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      orgName,
      fullName: 'Bench Owner',
      email: `bench.${run}.${orgName.toLowerCase()}@example.test`,
      password: 'correct horse battery',
    }),
  });
  if (res.status !== 201) throw new Error(`signup ${res.status}`);
  return res.json();
}

/**
 * The environment every bench's processes share: development secrets made for this run, its own Redis prefix and
 * exchange (removed at the end by the bench), and sign-up open for the bench's organizations.
 */
function runEnv(run) {
  return {
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    REDIS_PREFIX: `bench_${run}:`,
    EVENTS_EXCHANGE: `bench_${run}`,
    JWT_SECRET: randomBytes(32).toString('hex'),
    INTERNAL_AUTH_SEED: randomBytes(32).toString('hex'),
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    SIGNUP_ENABLED: 'true',
  };
}

/**
 * A run's environment for identity + crm at the given ports, with messaging's address pointing nowhere (the
 * identity + crm benches never call it). `extra` adds or overrides.
 */
export async function identityCrmEnv(run, ports, extra = {}) {
  return {
    ...runEnv(run),
    IDENTITY_ADDR: `127.0.0.1:${ports.identity}`,
    CRM_ADDR: `127.0.0.1:${ports.crm}`,
    MESSAGING_ADDR: `127.0.0.1:${await freePort()}`,
    ...extra,
  };
}

/**
 * A run's environment for identity + messaging (gRPC and HTTP) at the given ports, with crm's and the connector's
 * addresses pointing nowhere (the messaging benches never call them; they only have to parse). `extra` adds or
 * overrides.
 */
export async function identityMessagingEnv(run, ports, extra = {}) {
  return {
    ...runEnv(run),
    IDENTITY_ADDR: `127.0.0.1:${ports.identity}`,
    MESSAGING_ADDR: `127.0.0.1:${ports.messaging}`,
    MESSAGING_HTTP_URL: `http://127.0.0.1:${ports.messagingHttp}`,
    CRM_ADDR: `127.0.0.1:${await freePort()}`,
    CONNECTOR_ADDR: `127.0.0.1:${await freePort()}`,
    ...extra,
  };
}

/** The gRPC address variable of each service a whole-stack bench may run. */
const ADDR_VARS = {
  identity: 'IDENTITY_ADDR',
  crm: 'CRM_ADDR',
  'chatnet-connector': 'CONNECTOR_ADDR',
  messaging: 'MESSAGING_ADDR',
  webhooks: 'WEBHOOKS_ADDR',
  automation: 'AUTOMATION_ADDR',
  ai: 'AI_ADDR',
};

/**
 * What every process of a whole-stack bench (bench/realtime, bench/campaign) shares: development secrets made for this
 * run, its exchange and Redis prefix, and every service's address (`ports`: the services it runs; one it leaves out
 * points at port 9, where nothing listens). `extra` adds or overrides.
 */
export function wholeStackEnv({ amqpUrl, exchange, redisPrefix, ports, extra = {} }) {
  return {
    NODE_ENV: 'development',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    AMQP_URL: amqpUrl,
    EVENTS_EXCHANGE: exchange,
    REDIS_PREFIX: redisPrefix,
    JWT_SECRET: randomBytes(32).toString('hex'),
    INTERNAL_AUTH_SEED: randomBytes(32).toString('hex'),
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    ...Object.fromEntries(Object.entries(ADDR_VARS).map(([s, v]) => [v, ports[s] ? `127.0.0.1:${ports[s]}` : '127.0.0.1:9'])),
    SIGNUP_ENABLED: 'true',
    ...extra,
  };
}
