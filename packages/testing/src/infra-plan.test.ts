import { checkOutcome, containersPlan, serverUrls } from './infra-plan';

const docker = { available: true } as const;
const noDocker = { available: false, reason: 'Could not find a working container runtime strategy' } as const;

describe('npm start / npm test: servers that do not answer', () => {
  it('goes on, saying nothing, when every server answers', () => {
    expect(checkOutcome({ down: [], env: {}, docker: noDocker, purpose: 'start' })).toEqual({ proceed: true, lines: [] });
  });

  it('npm start stops naming each unreachable server, where it looked and how to start it', () => {
    const out = checkOutcome({
      down: ['rabbitmq', 'postgres'],
      env: { DATABASE_URL: 'postgres://u:secret@db.local:6543/x' },
      docker: noDocker,
      purpose: 'start',
    });
    expect(out.proceed).toBe(false);
    expect(out.lines).toHaveLength(2);
    expect(out.lines[0]).toMatch(/^✗ PostgreSQL is not reachable at db\.local:6543: start it with .*point DATABASE_URL at a running server\.$/);
    expect(out.lines[1]).toMatch(/^✗ RabbitMQ is not reachable at 127\.0\.0\.1:5672: start it with /);
    expect(out.lines.join('\n')).not.toContain('secret');
    expect(out.lines.join('\n')).not.toContain('dev:containers');
  });

  it('npm start also names `npm run dev:containers` when a Docker engine answers', () => {
    const out = checkOutcome({ down: ['redis'], env: {}, docker, purpose: 'start' });
    expect(out.proceed).toBe(false);
    expect(out.lines[0]).toMatch(/^✗ Redis is not reachable at 127\.0\.0\.1:6379: /);
    expect(out.lines[1]).toBe(
      '✗ Or run `npm run dev:containers` (a Docker engine answers here): it starts PostgreSQL, RabbitMQ and Redis in containers and the stack against them.',
    );
  });

  it('npm test goes on when a Docker engine answers (globalSetup starts the missing servers) and stops without one', () => {
    expect(checkOutcome({ down: ['postgres', 'redis'], env: {}, docker, purpose: 'test' })).toEqual({
      proceed: true,
      lines: ['› PostgreSQL, Redis not reachable: tests will start them with testcontainers.'],
    });
    const without = checkOutcome({ down: ['postgres'], env: {}, docker: noDocker, purpose: 'test' });
    expect(without.proceed).toBe(false);
    expect(without.lines).toHaveLength(1);
  });
});

describe('npm run dev:containers', () => {
  it('stops without a Docker engine, saying why and what works instead', () => {
    const plan = containersPlan({ env: {}, docker: noDocker });
    expect(plan.proceed).toBe(false);
    expect(plan.lines[0]).toBe(
      '✗ npm run dev:containers needs a Docker engine, and none answers here (Could not find a working container runtime strategy).',
    );
    expect(plan.lines[1]).toContain('`npm start`');
  });

  it('starts all three servers in containers when no URL is set', () => {
    expect(containersPlan({ env: {}, docker })).toEqual({
      proceed: true,
      start: ['postgres', 'rabbitmq', 'redis'],
      keep: [],
      lines: ['› Starting PostgreSQL, RabbitMQ, Redis in containers (testcontainers)…'],
    });
  });

  it('keeps a server the developer pointed at, and starts only the others', () => {
    const plan = containersPlan({ env: { AMQP_URL: 'amqp://me:pw@broker.local:5673', REDIS_URL: '' }, docker });
    expect(plan).toEqual({
      proceed: true,
      start: ['postgres', 'redis'],
      keep: [{ key: 'rabbitmq', url: 'amqp://me:pw@broker.local:5673' }],
      lines: ['› Starting PostgreSQL, Redis in containers (testcontainers)…', '› RabbitMQ: using AMQP_URL (broker.local:5673).'],
    });
  });
});

test('each server is looked for at its variable, else the local default', () => {
  expect(serverUrls({ REDIS_URL: 'redis://cache:6380' })).toEqual({
    postgres: 'postgres://postgres@127.0.0.1:5432/postgres',
    rabbitmq: 'amqp://guest:guest@127.0.0.1:5672',
    redis: 'redis://cache:6380',
  });
});
