// `npm run rotate-keys`: re-encrypt every stored secret (AI provider keys, webhook secrets, chat session data and
// proxy URLs, SMTP passwords, social-network tokens) under the current ENCRYPTION_KEY, so a former key can be
// retired. Run it with the new key as ENCRYPTION_KEY and every key still in use in ENCRYPTION_KEYS_OLD ("1:key,2:key"),
// the same values the services run with. Afterwards ENCRYPTION_KEYS_OLD can be emptied (keep it only while links in
// campaign emails already sent should keep working: they are signed with a key derived from it).
//
// Databases: <SERVICE>_DATABASE_URL (e.g. CRM_DATABASE_URL, CHATNET_CONNECTOR_DATABASE_URL) for each service, or else
// `crm_<service>` on the server of DATABASE_URL (what `npm start` creates). Without ENCRYPTION_KEY in the
// environment, the development key of `.local/secrets.env` is used.
import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { root } from './lib.mjs';

const require = createRequire(path.join(root, 'packages', 'db', 'package.json'));
const { createPool, rotateSecrets } = require('@crm/db');
const { SecretBox } = require(path.join(root, 'packages', 'crypto'));

/** The services that keep secrets at rest; each declares its columns in src/secrets.ts. */
const SERVICES = ['ai', 'automation', 'chatnet-connector', 'crm', 'webhooks'];

function devKey() {
  const file = path.join(root, '.local', 'secrets.env');
  if (!existsSync(file)) return undefined;
  return /^ENCRYPTION_KEY=(.*)$/m.exec(readFileSync(file, 'utf8'))?.[1];
}

function databaseUrl(service, env) {
  const own = env[`${service.replace(/-/g, '_').toUpperCase()}_DATABASE_URL`];
  if (own) return own;
  const u = new URL(env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  u.pathname = `/crm_${service.replace(/-/g, '_')}`;
  return u.toString();
}

/** Rotates every service's secrets; returns one line per column. Exported for the test. */
export async function rotateKeys(env = process.env, log = console.log) {
  const key = env.ENCRYPTION_KEY ?? devKey();
  if (!key) throw new Error('ENCRYPTION_KEY is not set (and .local/secrets.env has none)');
  const box = SecretBox.fromEnv(key, env.ENCRYPTION_KEYS_OLD ?? '');
  const lines = [];
  for (const service of SERVICES) {
    const { ENCRYPTED_COLUMNS } = require(path.join(root, 'services', service, 'dist', 'secrets.js'));
    const pool = createPool(databaseUrl(service, env), 2);
    try {
      for (const r of await rotateSecrets(pool, box, ENCRYPTED_COLUMNS)) {
        const line = `${service}: ${r.table}.${r.column}: ${r.rotated} re-encrypted, ${r.current} already under the current key`;
        lines.push(line);
        log(line);
      }
    } finally {
      await pool.end();
    }
  }
  return lines;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  rotateKeys().then(
    () => console.log('✓ Every stored secret is under the current ENCRYPTION_KEY; former keys can be removed from ENCRYPTION_KEYS_OLD.'),
    (err) => {
      console.error(`✗ ${err.message}`);
      process.exit(1);
    },
  );
}
