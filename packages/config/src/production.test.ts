import { randomBytes } from 'node:crypto';
import { ConfigError, directDatabaseUrl, fields, parseEnv, productionProblems, z } from './index';

// The shape every service's schema shares: development defaults for the infrastructure, required secrets.
const Env = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  DATABASE_URL: fields.url('postgres://postgres@127.0.0.1:5432/crm_demo'),
  DATABASE_DIRECT_URL: fields.databaseDirectUrl(),
  AMQP_URL: fields.url('amqp://guest:guest@127.0.0.1:5672'),
  REDIS_URL: fields.url('redis://127.0.0.1:6379'),
  JWT_SECRET: fields.secret(32),
  ENCRYPTION_KEY: fields.secret(32),
});

const production = {
  NODE_ENV: 'production',
  DATABASE_URL: 'postgres://demo:3f9a1c7e5b2d4f60@postgres:5432/crm_demo',
  AMQP_URL: 'amqp://demo:8c1e4a9f2b7d6035@rabbitmq:5672',
  REDIS_URL: 'redis://demo:a4d7e2c9f1b3806e@redis:6379',
  JWT_SECRET: randomBytes(32).toString('hex'),
  ENCRYPTION_KEY: randomBytes(32).toString('base64'),
};

/** The message parseEnv throws for `env`, or undefined when it accepts it. */
function refusal(env: Record<string, string | undefined>): string | undefined {
  try {
    parseEnv(Env, env);
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
}

test('a production environment with its own credentials and generated secrets starts', () => {
  expect(refusal(production)).toBeUndefined();
  expect(parseEnv(Env, production).AMQP_URL).toBe(production.AMQP_URL);
});

test('development and test keep the passwordless defaults', () => {
  const secrets = { JWT_SECRET: production.JWT_SECRET, ENCRYPTION_KEY: production.ENCRYPTION_KEY };
  expect(refusal(secrets)).toBeUndefined();
  expect(refusal({ ...secrets, NODE_ENV: 'test' })).toBeUndefined();
});

test.each([
  ['DATABASE_URL', 'the built-in default (unset)', { DATABASE_URL: undefined }, /DATABASE_URL: must carry a password/],
  ['DATABASE_URL', 'a URL without a password', { DATABASE_URL: 'postgres://demo@postgres:5432/crm_demo' }, /DATABASE_URL: must carry a password/],
  [
    'DATABASE_DIRECT_URL',
    'a URL without a password',
    { DATABASE_DIRECT_URL: 'postgres://demo@postgres:5432/crm_demo' },
    /DATABASE_DIRECT_URL: must carry a password/,
  ],
  ['AMQP_URL', 'the built-in default (unset)', { AMQP_URL: undefined }, /AMQP_URL: must not use RabbitMQ's guest account/],
  ['AMQP_URL', 'guest:guest on another host', { AMQP_URL: 'amqp://guest:guest@rabbitmq:5672' }, /AMQP_URL: must not use RabbitMQ's guest account/],
  ['AMQP_URL', 'a user without a password', { AMQP_URL: 'amqp://demo@rabbitmq:5672' }, /AMQP_URL: must carry a user and password/],
  ['REDIS_URL', 'the built-in default (unset)', { REDIS_URL: undefined }, /REDIS_URL: must carry a password/],
  ['REDIS_URL', 'a user without a password', { REDIS_URL: 'redis://demo@redis:6379' }, /REDIS_URL: must carry a password/],
  [
    'JWT_SECRET',
    'a placeholder',
    { JWT_SECRET: 'change-me-change-me-change-me-change-me' },
    /JWT_SECRET: looks like an example value.*openssl rand -hex 32/,
  ],
  ['JWT_SECRET', 'a repeated character', { JWT_SECRET: 'x'.repeat(40) }, /JWT_SECRET: looks like an example value/],
  [
    'ENCRYPTION_KEY',
    'an example key',
    { ENCRYPTION_KEY: 'your-secret-encryption-key-for-example' },
    /ENCRYPTION_KEY: looks like an example value.*openssl rand -base64 32/,
  ],
  ['ENCRYPTION_KEY', 'a low-entropy key', { ENCRYPTION_KEY: '0123'.repeat(11) }, /ENCRYPTION_KEY: looks like an example value/],
])('production refuses %s with %s', (_name, _case, change, message) => {
  expect(refusal({ ...production, ...change })).toMatch(message);
});

test('DATABASE_DIRECT_URL is optional: unset or empty (compose passes ${VAR:-} through), sessions go to DATABASE_URL', () => {
  for (const unset of [undefined, '']) {
    const config = parseEnv(Env, { ...production, DATABASE_DIRECT_URL: unset });
    expect(directDatabaseUrl(config)).toBe(production.DATABASE_URL);
  }
  const direct = 'postgres://demo:3f9a1c7e5b2d4f60@db.internal:5432/crm_demo';
  expect(directDatabaseUrl(parseEnv(Env, { ...production, DATABASE_DIRECT_URL: direct }))).toBe(direct);
});

test('a missing secret is refused by the schema itself, naming the variable', () => {
  expect(refusal({ ...production, JWT_SECRET: undefined })).toMatch(/JWT_SECRET/);
});

test('every problem is listed at once, one line per variable', () => {
  const message = refusal({ NODE_ENV: 'production', JWT_SECRET: production.JWT_SECRET, ENCRYPTION_KEY: production.ENCRYPTION_KEY });
  expect(message?.split('\n')).toEqual([
    'Invalid configuration:',
    expect.stringMatching(/^ {2}DATABASE_URL: /),
    expect.stringMatching(/^ {2}AMQP_URL: /),
    expect.stringMatching(/^ {2}REDIS_URL: /),
  ]);
});

test('only the variables a service has are checked (the gateway has no DATABASE_URL)', () => {
  const { DATABASE_URL: _, ...gateway } = production;
  expect(productionProblems(gateway)).toEqual([]);
  expect(productionProblems({ NODE_ENV: 'production' })).toEqual([]);
});

test('a schema without NODE_ENV is checked when the environment says production', () => {
  const Bare = z.object({ AMQP_URL: fields.url('amqp://guest:guest@127.0.0.1:5672') });
  expect(() => parseEnv(Bare, { NODE_ENV: 'production' })).toThrow(/AMQP_URL: must not use RabbitMQ's guest account/);
  expect(parseEnv(Bare, {}).AMQP_URL).toBe('amqp://guest:guest@127.0.0.1:5672');
});
