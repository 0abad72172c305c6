import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

// .env.example ends with every setting of every service, generated from the services' own config: a setting
// added to a service's config.ts without `npm run env:example` fails here.
const root = path.join(__dirname, '..', '..');
const services = readdirSync(path.join(root, 'services')).sort();

test('the generated part of .env.example is up to date with every service config', () => {
  const r = spawnSync(process.execPath, [path.join(root, 'scripts', 'env-example.mjs'), '--check'], { cwd: root, encoding: 'utf8' });
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
});

test('it lists each service with its settings commented out (defaults, never secrets)', () => {
  const text = readFileSync(path.join(root, '.env.example'), 'utf8');
  const generated = text.slice(text.indexOf('# ==== Every setting'));
  for (const s of services) expect(generated).toContain(`# ---- ${s} ----`);
  // A few settings any operator looks for, each with its default.
  expect(generated).toContain('# DATABASE_POOL_SIZE=30');
  expect(generated).toContain('# WEBHOOK_ENDPOINT_CONCURRENCY=8');
  // Commented out: compose reads uncommented lines of .env as its own variables.
  expect(generated.split('\n').filter((l) => l && !l.startsWith('#'))).toEqual([]);
  expect(generated).not.toMatch(/^# [A-Z_]*(SECRET|PRIVATE_KEY|PASSWORD|ENCRYPTION_KEY)[A-Z_]*=/m);
});

test('compose hands each service its own optional tuning file', () => {
  const compose = readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
  for (const s of services) expect(compose).toContain(`env_file: [{ path: ./deploy/env/${s}.env, required: false }]`);
});
