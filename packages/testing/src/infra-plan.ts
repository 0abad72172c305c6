/**
 * What `npm start`, `npm test` and `npm run dev:containers` do about PostgreSQL, RabbitMQ and Redis, decided from
 * facts gathered beforehand (which servers answer, whether a Docker engine does, which URLs the developer set).
 * Pure, so every branch is unit-tested; the scripts only gather the facts and print or act on the answer.
 */
export type ServerKey = 'postgres' | 'rabbitmq' | 'redis';

export interface ServerInfo {
  key: ServerKey;
  name: string;
  /** The variable every service reads its URL from. */
  envVar: 'DATABASE_URL' | 'AMQP_URL' | 'REDIS_URL';
  defaultUrl: string;
  defaultPort: number;
  howToStart: string;
}

export const SERVERS: readonly ServerInfo[] = [
  {
    key: 'postgres',
    name: 'PostgreSQL',
    envVar: 'DATABASE_URL',
    defaultUrl: 'postgres://postgres@127.0.0.1:5432/postgres',
    defaultPort: 5432,
    howToStart:
      'start it with `pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start` (Debian), `brew services start postgresql`, or `docker compose up -d postgres`; or point DATABASE_URL at a running server',
  },
  {
    key: 'rabbitmq',
    name: 'RabbitMQ',
    envVar: 'AMQP_URL',
    defaultUrl: 'amqp://guest:guest@127.0.0.1:5672',
    defaultPort: 5672,
    howToStart:
      'start it with `rabbitmq-server -detached`, `brew services start rabbitmq`, or `docker compose up -d rabbitmq`; or point AMQP_URL at a running broker',
  },
  {
    key: 'redis',
    name: 'Redis',
    envVar: 'REDIS_URL',
    defaultUrl: 'redis://127.0.0.1:6379',
    defaultPort: 6379,
    howToStart:
      'start it with `redis-server --daemonize yes`, `brew services start redis`, or `docker compose up -d redis`; or point REDIS_URL at a running server',
  },
];

export type Env = Record<string, string | undefined>;
export type Docker = { available: true } | { available: false; reason: string };

/** The URL each server is looked for at: its variable, else the local default. */
export function serverUrls(env: Env): Record<ServerKey, string> {
  return Object.fromEntries(SERVERS.map((s) => [s.key, env[s.envVar] || s.defaultUrl])) as Record<ServerKey, string>;
}

/** host:port of a server URL, for messages (never the credentials in it). */
function where(url: string, defaultPort: number): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || defaultPort}`;
}

export interface CheckOutcome {
  /** Go on (everything answers, or the test run will start what is missing in containers). */
  proceed: boolean;
  /** What to print, in order: `›` lines go to stdout, `✗` lines to stderr. */
  lines: string[];
}

export const DEV_CONTAINERS_COMMAND = 'npm run dev:containers';

/**
 * `npm start` and `npm test` found `down` servers not answering. Nothing down: go on. `npm test` with a Docker engine:
 * go on, globalSetup starts them in containers. Otherwise stop, naming each server with how to start it, and when a
 * Docker engine answers, the one command that starts all three in containers.
 */
export function checkOutcome(opts: { down: ServerKey[]; env: Env; docker: Docker; purpose: 'start' | 'test' }): CheckOutcome {
  const down = SERVERS.filter((s) => opts.down.includes(s.key));
  if (down.length === 0) return { proceed: true, lines: [] };
  if (opts.purpose === 'test' && opts.docker.available) {
    return { proceed: true, lines: [`› ${down.map((s) => s.name).join(', ')} not reachable: tests will start them with testcontainers.`] };
  }
  const urls = serverUrls(opts.env);
  const lines = down.map((s) => `✗ ${s.name} is not reachable at ${where(urls[s.key], s.defaultPort)}: ${s.howToStart}.`);
  if (opts.purpose === 'start' && opts.docker.available) {
    lines.push(
      `✗ Or run \`${DEV_CONTAINERS_COMMAND}\` (a Docker engine answers here): it starts PostgreSQL, RabbitMQ and Redis in containers and the stack against them.`,
    );
  }
  return { proceed: false, lines };
}

export type ContainersPlan =
  | { proceed: false; lines: string[] }
  | {
      proceed: true;
      /** Servers to start in containers. */
      start: ServerKey[];
      /** Servers the developer pointed at with their variable: used as they are. */
      keep: Array<{ key: ServerKey; url: string }>;
      lines: string[];
    };

/**
 * `npm run dev:containers`: without a Docker engine there is nothing it can do (say why, and what works instead).
 * With one, every server whose variable is unset is started in a container; one the developer set is kept.
 */
export function containersPlan(opts: { env: Env; docker: Docker }): ContainersPlan {
  if (!opts.docker.available) {
    return {
      proceed: false,
      lines: [
        `✗ ${DEV_CONTAINERS_COMMAND} needs a Docker engine, and none answers here (${opts.docker.reason}).`,
        '✗ Start Docker (or set DOCKER_HOST), or run PostgreSQL, RabbitMQ and Redis yourself and use `npm start`.',
      ],
    };
  }
  const kept = SERVERS.filter((s) => opts.env[s.envVar]);
  const started = SERVERS.filter((s) => !opts.env[s.envVar]);
  const lines = [
    ...(started.length ? [`› Starting ${started.map((s) => s.name).join(', ')} in containers (testcontainers)…`] : []),
    ...kept.map((s) => `› ${s.name}: using ${s.envVar} (${where(opts.env[s.envVar]!, s.defaultPort)}).`),
  ];
  return { proceed: true, start: started.map((s) => s.key), keep: kept.map((s) => ({ key: s.key, url: opts.env[s.envVar]! })), lines };
}
