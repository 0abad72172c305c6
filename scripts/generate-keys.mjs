// `npm run --silent keys > .env`: a deployment's .env with every secret filled in. It copies .env.example and
// fills each empty secret: JWT_SECRET, ENCRYPTION_KEY, every service's database, broker and Redis password, the
// internal credential (one Ed25519 private key per process, and every public key) and the mutual-TLS material (a CA,
// and per process a certificate and key: scripts/tls-certs.mjs). Values already set in an existing .env given as the
// first argument are kept, so re-running adds only what is missing.
// Rotation: generate a new value, put it in .env and redeploy every process that reads it (README "Trust model");
// for the TLS material, remove every GRPC_TLS_ line from .env and rerun: all of it is made anew, together.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { root } from './lib.mjs';
import { generateTlsMaterial } from './tls-certs.mjs';

const require = createRequire(import.meta.url);
let kit;
try {
  kit = require('@crm/grpc-kit');
} catch {
  // Only .env lines go to stdout (it is redirected into a file), so say this on stderr.
  process.stderr.write('✗ @crm/grpc-kit is not built yet: run `npm run build` first.\n');
  process.exit(1);
}

/** A process's prefix in .env and its host name in compose and deploy/k8s (both name the connector by its service). */
const prefixOf = (name) => (name === 'connector' ? 'CHATNET_CONNECTOR' : name.toUpperCase());
const hostOf = (name) => (name === 'connector' ? 'chatnet-connector' : name);
/** The .env names of each process's private key, TLS certificate and TLS key. */
const keyVar = (name) => `${prefixOf(name)}_PRIVATE_KEY`;
const certVar = (name) => `${prefixOf(name)}_GRPC_TLS_CERT`;
const tlsKeyVar = (name) => `${prefixOf(name)}_GRPC_TLS_KEY`;
const TLS_VARS = ['GRPC_TLS_CA', ...kit.INTERNAL_PRINCIPALS.flatMap((n) => [certVar(n), tlsKeyVar(n)])];

const parse = (text) =>
  new Map(
    text
      .split('\n')
      .map((l) => /^([A-Z0-9_]+)=(.*)$/.exec(l.trim()))
      .filter(Boolean)
      .map((m) => [m[1], m[2]]),
  );
const kept = process.argv[2] && existsSync(process.argv[2]) ? parse(readFileSync(process.argv[2], 'utf8')) : new Map();

const { privateKeys, publicKeys } = kit.generateInternalKeys(() => randomBytes(32));
const generated = new Map([
  ['JWT_SECRET', randomBytes(32).toString('hex')],
  ['ENCRYPTION_KEY', randomBytes(32).toString('base64')],
  ['SERVICE_PUBLIC_KEYS', publicKeys],
  ...Object.entries(privateKeys).map(([name, key]) => [keyVar(name), key]),
]);
// Key pairs belong together: keep the old public list only if every private key is kept too.
const keysKept = Object.keys(privateKeys).every((n) => kept.get(keyVar(n))) && kept.get('SERVICE_PUBLIC_KEYS');
// The TLS material too: certificates from one CA, so all of it is kept or all of it is made anew (only then: it is the slow part).
const tlsKept = TLS_VARS.every((v) => kept.get(v));
if (!tlsKept) {
  const tls = await generateTlsMaterial(Object.fromEntries(kit.INTERNAL_PRINCIPALS.map((n) => [n, hostOf(n)])));
  generated.set('GRPC_TLS_CA', tls.ca);
  for (const [name, { cert, key }] of Object.entries(tls.certs)) generated.set(certVar(name), cert).set(tlsKeyVar(name), key);
}
const valueFor = (name) => {
  const isKey = name === 'SERVICE_PUBLIC_KEYS' || name.endsWith('_PRIVATE_KEY');
  if (isKey) return keysKept ? kept.get(name) : generated.get(name);
  if (TLS_VARS.includes(name)) return tlsKept ? kept.get(name) : generated.get(name);
  if (kept.get(name)) return kept.get(name);
  if (generated.has(name)) return generated.get(name);
  // Passwords go into connection URLs as they are: hex needs no escaping.
  if (name.endsWith('_PASSWORD')) return randomBytes(24).toString('hex');
  return undefined;
};

const example = readFileSync(path.join(root, '.env.example'), 'utf8');
const out = example.split('\n').map((line) => {
  const m = /^([A-Z0-9_]+)=(.*)$/.exec(line);
  if (!m) return line;
  const value = m[2] === '' ? valueFor(m[1]) : (kept.get(m[1]) ?? m[2]);
  return value === undefined ? line : `${m[1]}=${value}`;
});
process.stdout.write(out.join('\n'));
