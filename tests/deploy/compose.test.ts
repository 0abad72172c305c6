import { execFileSync } from 'node:child_process';
import { randomBytes, X509Certificate } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { grpcTransportFromEnv } from '@crm/grpc-kit';

// No Docker engine in the test environment: the compose file is checked as data, and each service's
// environment (with .env filled in) is fed to that service's own loadConfig under NODE_ENV=production.
const root = path.join(__dirname, '..', '..');
const composeText = readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
const compose = parse(composeText, { merge: true }) as {
  services: Record<
    string,
    {
      image?: string;
      build?: { context: string; dockerfile?: string };
      networks?: string[];
      ports?: string[];
      volumes?: string[];
      profiles?: string[];
      environment?: Record<string, string>;
      healthcheck?: { test: unknown; start_period?: string };
      depends_on?: Record<string, { condition: string }>;
      entrypoint?: string[];
    }
  >;
  networks: Record<string, { internal?: boolean } | null>;
};
const example = Object.fromEntries(
  readFileSync(path.join(root, '.env.example'), 'utf8')
    .split('\n')
    .map((line) => /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [m[1], m[2]]),
) as Record<string, string>;
const exampleVars = Object.keys(example);

const APP = ['identity', 'crm', 'messaging', 'chatnet-connector', 'automation', 'ai', 'webhooks'];
const INFRA = ['postgres', 'pgbouncer', 'rabbitmq', 'redis'];
/** Services that must reach the internet: SMTP (identity, automation), the chat network, AI providers, customers' webhooks. */
const CALLS_OUT = ['identity', 'chatnet-connector', 'automation', 'ai', 'webhooks'];

/** A .env as an operator fills it: a fresh random value for every secret the example leaves empty, the example's value for the rest. */
function filledEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of exampleVars) env[name] = example[name] || randomBytes(24).toString('hex');
  env.ENCRYPTION_KEY = randomBytes(32).toString('base64');
  Object.assign(env, {
    GATEWAY_PORT: '8080',
    PUBLIC_URL: 'https://crm.example.org',
    CORS_ORIGINS: '*',
    SMTP_URL: '',
    OTEL_EXPORTER_OTLP_ENDPOINT: '',
  });
  Object.assign(env, { JAEGER_UI_PORT: '16686', PROMETHEUS_PORT: '9090' });
  return env;
}

/** Compose interpolation of ${VAR}, ${VAR:?message} and ${VAR:-default}. */
function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(/\$\{([A-Z0-9_]+)(?::([?-])([^}]*))?\}/g, (_, name: string, op?: string, arg?: string) => {
    const v = env[name];
    if (v) return v;
    if (op === '?') throw new Error(`compose refuses: ${arg}`);
    return op === '-' ? (arg ?? '') : '';
  });
}

function serviceEnv(service: string, env = filledEnv()): Record<string, string> {
  const raw = compose.services[service].environment ?? {};
  return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, interpolate(String(v), env)]));
}

/** The `observability` profile's services (collector, Jaeger, Prometheus): started only with that profile. */
const OBSERVABILITY = Object.entries(compose.services)
  .filter(([, s]) => s.profiles?.includes('observability'))
  .map(([name]) => name);

test('only the gateway publishes a port or joins the edge network (observability UIs: the host loopback only)', () => {
  for (const [name, s] of Object.entries(compose.services)) {
    if (name === 'gateway') continue;
    if (OBSERVABILITY.includes(name)) {
      for (const port of s.ports ?? []) expect({ name, port }).toEqual({ name, port: expect.stringMatching(/^127\.0\.0\.1:/) });
      expect(s.networks).not.toContain('edge');
      continue;
    }
    expect({ name, ports: s.ports }).toEqual({ name, ports: undefined });
    expect(s.networks).not.toContain('edge');
  }
  expect(compose.services.gateway.ports).toEqual(['${GATEWAY_PORT:-8080}:8080']);
  expect(compose.services.gateway.networks).toEqual(['edge', 'internal']);
});

test('the internal network has no route out; only services that call out also join egress', () => {
  expect(compose.networks.internal).toEqual({ internal: true });
  for (const name of [...INFRA, ...APP]) {
    const expected = CALLS_OUT.includes(name) ? ['internal', 'egress'] : ['internal'];
    expect({ name, networks: compose.services[name].networks }).toEqual({ name, networks: expected });
  }
});

test('each service connects to PostgreSQL as its own role, with a password, to its own database only', () => {
  for (const name of APP) {
    const env = serviceEnv(name);
    const role = name.replace(/-/g, '_');
    for (const key of ['DATABASE_URL', 'DATABASE_DIRECT_URL']) {
      const url = new URL(env[key]);
      expect({ name, key, user: url.username, db: url.pathname }).toEqual({ name, key, user: role, db: `/crm_${role}` });
      expect(url.password).not.toBe('');
    }
  }
  expect(composeText).not.toMatch(/POSTGRES_HOST_AUTH_METHOD/);
});

describe('PgBouncer', () => {
  /** deploy/pgbouncer/pgbouncer.ini's [pgbouncer] settings. */
  const settings = Object.fromEntries(
    readFileSync(path.join(root, 'deploy', 'pgbouncer', 'pgbouncer.ini'), 'utf8')
      .split('\n')
      .map((l) => /^\s*([a-z_]+)\s*=\s*(.*?)\s*$/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1], m[2]]),
  );

  test("each service's pool goes through it; what holds a session (DATABASE_DIRECT_URL) to postgres directly", () => {
    for (const name of APP) {
      const env = serviceEnv(name);
      const [pooled, direct] = [new URL(env.DATABASE_URL), new URL(env.DATABASE_DIRECT_URL)];
      expect({ name, pooled: pooled.host, direct: direct.host }).toEqual({ name, pooled: 'pgbouncer:5432', direct: 'postgres:5432' });
      // The same role, password and database either way.
      const login = (u: URL) => ({ name, user: u.username, password: u.password, db: u.pathname });
      expect(login(pooled)).toEqual(login(direct));
      expect({ name, waitsFor: compose.services[name].depends_on?.pgbouncer }).toEqual({ name, waitsFor: { condition: 'service_healthy' } });
    }
  });

  test('pools in transaction mode, 1.21 or later with prepared statements on, in front of postgres', () => {
    const m = /^edoburu\/pgbouncer:v(\d+)\.(\d+)\.\d+(-p\d+)?$/.exec(compose.services.pgbouncer.image ?? '');
    expect(m).not.toBeNull();
    const [major, minor] = [Number(m![1]), Number(m![2])];
    expect(major > 1 || (major === 1 && minor >= 21)).toBe(true);
    expect(settings).toMatchObject({ pool_mode: 'transaction', auth_type: 'scram-sha-256', listen_port: '5432' });
    expect(Number(settings.max_prepared_statements)).toBeGreaterThan(0);
    expect(compose.services.pgbouncer.volumes).toContain('./deploy/pgbouncer:/deploy/pgbouncer:ro');
    expect(compose.services.pgbouncer.entrypoint).toEqual(['/bin/sh', '/deploy/pgbouncer/start.sh']);
    expect(serviceEnv('pgbouncer')).toMatchObject({ POSTGRES_HOST: 'postgres', POSTGRES_PORT: '5432' });
  });

  test("knows every service role's password, the one postgres gave it", () => {
    const env = filledEnv();
    const [bouncer, postgres] = [serviceEnv('pgbouncer', env), serviceEnv('postgres', env)];
    for (const name of APP) {
      const key = `${name.replace(/-/g, '_').toUpperCase()}_DB_PASSWORD`;
      expect({ key, password: bouncer[key] }).toEqual({ key, password: postgres[key] });
      expect({ key, inUrl: new URL(serviceEnv(name, env).DATABASE_URL).password }).toEqual({ key, inUrl: postgres[key] });
    }
  });

  test("its server connections fit in PostgreSQL's default max_connections beside the services' direct ones", () => {
    // One replica of each service: at most 10 direct connections (README: connection budget), 3 kept for superusers.
    expect(APP.length * Number(settings.default_pool_size) + 10).toBeLessThanOrEqual(100 - 3);
  });
});

test('each service uses its own RabbitMQ and Redis user, never guest and never without a password', () => {
  for (const name of [...APP, 'gateway']) {
    const env = serviceEnv(name);
    for (const key of ['AMQP_URL', 'REDIS_URL'] as const) {
      if (!env[key]) continue;
      const url = new URL(env[key]);
      expect({ name, key, user: url.username }).toEqual({ name, key, user: name });
      expect(url.password).not.toBe('');
    }
  }
  expect(composeText).not.toMatch(/guest/);
});

test('every container has a health check with a start period, so slow start-up (migrations) is not counted as failure', () => {
  // The observability profile's tools are optional and nothing waits on them (the collector's image has no shell
  // to run a check in); every container of the stack itself is checked.
  for (const [name, s] of Object.entries(compose.services).filter(([n]) => !OBSERVABILITY.includes(n))) {
    expect({ name, startPeriod: s.healthcheck?.start_period }).toEqual({ name, startPeriod: expect.stringMatching(/^\d+s$/) });
  }
});

test('RabbitMQ is 3.13 or 4.x (quorum queues with delivery limits, definitions import)', () => {
  const m = /^rabbitmq:(\d+)\.(\d+)/.exec(compose.services.rabbitmq.image ?? '');
  expect(m).not.toBeNull();
  const [major, minor] = [Number(m![1]), Number(m![2])];
  expect(major > 3 || (major === 3 && minor >= 13)).toBe(true);
});

/** Every Dockerfile of the repository, wherever it is (a service may get its own one day). */
function dockerfiles(dir = root): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.isDirectory()) return ['node_modules', 'dist', '.git', '.turbo', '.local'].includes(e.name) ? [] : dockerfiles(path.join(dir, e.name));
    return /^Dockerfile(\..+)?$|\.Dockerfile$/.test(e.name) ? [path.join(dir, e.name)] : [];
  });
}

test('every Dockerfile builds and runs on Node 22 or later (Node 20 reached its end of life), and compose builds the services with one of them', () => {
  const files = dockerfiles();
  expect(files.map((f) => path.relative(root, f))).toContain('Dockerfile');
  for (const file of files) {
    const where = path.relative(root, file);
    // A FROM names a base image, or an earlier stage of the same file (`FROM build`), which is checked where it starts.
    const stages = new Set<string>();
    for (const [, image, stage] of readFileSync(file, 'utf8').matchAll(/^FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?/gim)) {
      if (!stages.has(image.toLowerCase())) {
        const major = /^(?:docker\.io\/)?(?:library\/)?node:(\d+)/.exec(image)?.[1];
        expect({ where, image, nodeMajor: Number(major) >= 22 }).toEqual({ where, image, nodeMajor: true });
      }
      if (stage) stages.add(stage.toLowerCase());
    }
  }
  for (const name of [...APP, 'gateway']) {
    const build = compose.services[name].build;
    const dockerfile = build && path.join(root, build.context, build.dockerfile ?? 'Dockerfile');
    expect({ name, dockerfile: dockerfile && files.includes(dockerfile) }).toEqual({ name, dockerfile: true });
  }
});

test('each service image is named messaging-crm/<service>, as deploy/k8s expects', () => {
  for (const name of [...APP, 'gateway']) expect({ name, image: compose.services[name].image }).toEqual({ name, image: `messaging-crm/${name}` });
});

test("messaging's attachments volume is mounted where the image created it owned by the runtime user", () => {
  const mount = compose.services.messaging.volumes?.find((v) => v.startsWith('attachments:'));
  const dir = mount?.split(':')[1];
  expect(dir).toBe(serviceEnv('messaging').ATTACHMENTS_DIR);
  const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  expect(runtime).toContain(`mkdir -p ${dir} && chown node:node ${dir}`);
  // Created before the switch to the unprivileged user (only root may chown), and that switch is there.
  expect(runtime.indexOf(`chown node:node ${dir}`)).toBeLessThan(runtime.indexOf('USER node'));
});

test('the observability profile runs a collector, Jaeger and Prometheus; services export to it only when the endpoint is set', () => {
  expect(OBSERVABILITY.sort()).toEqual(['jaeger', 'otel-collector', 'prometheus']);
  expect(compose.services['otel-collector'].networks).toEqual(['internal']);
  for (const name of [...APP, 'gateway']) {
    expect({ name, endpoint: serviceEnv(name).OTEL_EXPORTER_OTLP_ENDPOINT }).toEqual({ name, endpoint: '' });
    const on = serviceEnv(name, { ...filledEnv(), OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector:4318' });
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { loadConfig } = require(`@crm/${name}`) as {
      loadConfig: (env: Record<string, string | undefined>) => { OTEL_EXPORTER_OTLP_ENDPOINT?: string };
    };
    expect({ name, endpoint: loadConfig(on).OTEL_EXPORTER_OTLP_ENDPOINT }).toEqual({ name, endpoint: 'http://otel-collector:4318' });
    expect({ name, endpoint: loadConfig(serviceEnv(name)).OTEL_EXPORTER_OTLP_ENDPOINT }).toEqual({ name, endpoint: undefined });
  }
});

test('the connector runs the real chat-network driver, not the sandbox', () => {
  expect(serviceEnv('chatnet-connector').CHATNET_DRIVER).toBe('zca');
});

test('every variable the compose file reads is listed in .env.example, and every listed one is read', () => {
  const code = composeText.replace(/^\s*#.*$/gm, '');
  const used = new Set([...code.matchAll(/\$\{([A-Z0-9_]+)/g)].map((m) => m[1]));
  expect([...used].filter((v) => !exampleVars.includes(v))).toEqual([]);
  expect(exampleVars.filter((v) => !used.has(v))).toEqual([]);
});

test('.env.example holds no secrets: every secret is empty, so compose refuses to start until it is set', () => {
  const env: Record<string, string> = {};
  for (const line of readFileSync(path.join(root, '.env.example'), 'utf8').split('\n')) {
    const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    if (m) env[m[1]] = m[2];
  }
  for (const [name, value] of Object.entries(env)) {
    if (/PASSWORD|SECRET|KEY/.test(name)) expect({ name, value }).toEqual({ name, value: '' });
  }
  expect(() => serviceEnv('gateway', env)).toThrow(/compose refuses/);
});

describe.each([...APP, 'gateway'])('%s with the compose environment', (name) => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { loadConfig } = require(`@crm/${name}`) as { loadConfig: (env: Record<string, string | undefined>) => { NODE_ENV: string } };

  test('starts under NODE_ENV=production', () => {
    expect(loadConfig(serviceEnv(name)).NODE_ENV).toBe('production');
  });

  test('refuses the development defaults it would otherwise fall back to', () => {
    const env: Record<string, string | undefined> = serviceEnv(name);
    const dropped = ['DATABASE_URL', 'AMQP_URL', 'REDIS_URL'].filter((k) => k in env);
    for (const k of dropped) env[k] = undefined;
    let message = '';
    try {
      loadConfig(env);
    } catch (err) {
      message = (err as Error).message;
    }
    for (const k of dropped) expect(message).toContain(`${k}: `);
  });
});

test("crm's loadConfig refuses a production environment with the default AMQP URL", () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { loadConfig } = require('@crm/crm') as { loadConfig: (env: Record<string, string | undefined>) => unknown };
  const env = { ...serviceEnv('crm'), AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672' };
  expect(() => loadConfig(env)).toThrow(/AMQP_URL: must not use RabbitMQ's guest account/);
  expect(() => loadConfig({ ...env, AMQP_URL: undefined })).toThrow(/AMQP_URL: must not use RabbitMQ's guest account/);
});

test("the observability profile's Prometheus scrapes every service's metrics port as compose sets it", () => {
  const config = parse(readFileSync(path.join(root, 'deploy', 'observability', 'prometheus.yml'), 'utf8')) as {
    scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
  };
  const targets = config.scrape_configs.find((j) => j.job_name === 'services')!.static_configs.flatMap((c) => c.targets);
  expect(targets.sort()).toEqual([...APP, 'gateway'].map((name) => `${name}:${compose.services[name].environment!.METRICS_PORT}`).sort());
});

describe('mutual TLS between the processes', () => {
  /** The .env `npm run keys` writes: real certificates, so each process's transport is built as at its start. */
  let keys: Record<string, string>;
  beforeAll(() => {
    const text = execFileSync(process.execPath, [path.join(root, 'scripts', 'generate-keys.mjs')], { encoding: 'utf8' });
    keys = Object.fromEntries(
      text
        .split('\n')
        .map((l) => /^([A-Z0-9_]+)=(.*)$/.exec(l))
        .filter((m): m is RegExpExecArray => m !== null)
        .map((m) => [m[1], m[2]]),
    );
  }, 60_000);

  test.each([...APP, 'gateway'])('%s gets the CA and its own certificate, named for the host the others dial', (name) => {
    const env = serviceEnv(name, { ...filledEnv(), ...keys });
    expect(grpcTransportFromEnv(env).secure).toBe(true);
    const cert = new X509Certificate(Buffer.from(env.GRPC_TLS_CERT, 'base64'));
    expect(cert.subjectAltName?.split(', ')).toContain(`DNS:${name}`);
  });

  test('compose refuses to start any process without its TLS material', () => {
    for (const name of [...APP, 'gateway']) {
      expect(() => serviceEnv(name, { ...filledEnv(), ...keys, GRPC_TLS_CA: '' })).toThrow(
        /compose refuses: run npm run keys and put GRPC_TLS_CA in .env/,
      );
      const prefix = name.replace(/-/g, '_').toUpperCase();
      expect(() => serviceEnv(name, { ...filledEnv(), ...keys, [`${prefix}_GRPC_TLS_KEY`]: '' })).toThrow(/compose refuses/);
    }
  });

  test("the attachments port is reached over https (the gateway's streams, the connector's files) with the caller's certificate", () => {
    for (const name of ['gateway', 'chatnet-connector']) {
      const env = serviceEnv(name, { ...filledEnv(), ...keys });
      expect(env.MESSAGING_HTTP_URL).toBe('https://messaging:50063');
      expect(grpcTransportFromEnv(env).httpAgent(new URL(env.MESSAGING_HTTP_URL), 'MESSAGING_HTTP_URL')).toBeDefined();
    }
  });

  test("the services' healthcheck asks over mutual TLS with the container's own certificate (the probe script the image holds)", () => {
    expect(existsSync(path.join(root, 'packages', 'grpc-kit', 'src', 'health-probe.ts'))).toBe(true);
    for (const name of APP)
      expect({ name, test: compose.services[name].healthcheck?.test }).toEqual({
        name,
        test: ['CMD', 'node', '/app/packages/grpc-kit/dist/health-probe.js'],
      });
  });
});
