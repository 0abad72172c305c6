/**
 * Production must not run on the development defaults: every service's schema falls back to a
 * trust-auth `postgres` superuser, RabbitMQ's `guest` account and a Redis without a password, so a
 * forgotten variable would otherwise start a deployment with no credentials at all. These checks
 * run on the parsed config (defaults applied), so an unset variable and a default one are caught alike.
 */

/** Words that only a placeholder copied from an example contains, never a generated secret. */
const PLACEHOLDER = /change.?me|example|placeholder|replace|your.?secret|secret.?here|not.?a.?secret/i;

/**
 * A generated secret (even 16 random bytes as hex) all but never uses fewer distinct characters than
 * this; `'x'.repeat(40)` or `'ab'.repeat(16)` are test values, not secrets.
 */
const MIN_DISTINCT_CHARS = 8;

const GENERATE = {
  JWT_SECRET: 'openssl rand -hex 32',
  ENCRYPTION_KEY: 'openssl rand -base64 32',
} as const;

/** URL credentials, or undefined when the value is not a URL (its own schema reports that). */
function credentials(value: unknown): { user: string; password: string } | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const url = new URL(value);
    return { user: decodeURIComponent(url.username), password: decodeURIComponent(url.password) };
  } catch {
    return undefined;
  }
}

function databaseProblem(value: unknown): string | undefined {
  const c = credentials(value);
  if (c && !c.password) return 'must carry a password in production (postgres://<service>:<password>@host/db), not the development default';
  return undefined;
}

function amqpProblem(value: unknown): string | undefined {
  const c = credentials(value);
  if (!c) return undefined;
  if (c.user === 'guest' || c.password === 'guest') return "must not use RabbitMQ's guest account in production; give the service its own user";
  if (!c.user || !c.password) return 'must carry a user and password in production (amqp://<service>:<password>@host:5672)';
  return undefined;
}

function redisProblem(value: unknown): string | undefined {
  const c = credentials(value);
  if (c && !c.password) return 'must carry a password in production (redis://<service>:<password>@host:6379)';
  return undefined;
}

function secretProblem(name: keyof typeof GENERATE, value: unknown): string | undefined {
  if (value === undefined || value === '') return `is required in production; generate one (${GENERATE[name]})`;
  if (typeof value !== 'string') return undefined;
  if (PLACEHOLDER.test(value) || new Set(value).size < MIN_DISTINCT_CHARS) {
    return `looks like an example value, not a secret; generate one (${GENERATE[name]})`;
  }
  return undefined;
}

/**
 * The variables of `config` that hold a development default or an example secret while
 * NODE_ENV=production, as `[variable, message]` pairs; empty in development and test.
 * Only the variables a service's schema has are looked at.
 */
export function productionProblems(config: Record<string, unknown>): Array<[string, string]> {
  if (config.NODE_ENV !== 'production') return [];
  const checks: Array<[string, (value: unknown) => string | undefined]> = [
    ['DATABASE_URL', databaseProblem],
    ['DATABASE_DIRECT_URL', databaseProblem],
    ['AMQP_URL', amqpProblem],
    ['REDIS_URL', redisProblem],
    ['JWT_SECRET', (v) => secretProblem('JWT_SECRET', v)],
    ['ENCRYPTION_KEY', (v) => secretProblem('ENCRYPTION_KEY', v)],
  ];
  const problems: Array<[string, string]> = [];
  for (const [name, check] of checks) {
    if (!(name in config)) continue;
    const problem = check(config[name]);
    if (problem) problems.push([name, problem]);
  }
  return problems;
}
