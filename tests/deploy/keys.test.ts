import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { INTERNAL_PRINCIPALS, internalAuthFromEnv } from '@crm/grpc-kit';

const root = path.resolve(__dirname, '../..');
const generate = (...args: string[]) => execFileSync(process.execPath, [path.join(root, 'scripts/generate-keys.mjs'), ...args], { encoding: 'utf8' });
const parse = (text: string) => Object.fromEntries(text.split('\n').map((l) => /^([A-Z0-9_]+)=(.*)$/.exec(l)).filter((m): m is RegExpExecArray => !!m).map((m) => [m[1], m[2]]));
const keyVar = (name: string) => `${name === 'connector' ? 'CHATNET_CONNECTOR' : name.toUpperCase()}_PRIVATE_KEY`;

describe('npm run keys: a deployment .env with every secret', () => {
  it('fills every secret of .env.example and leaves only optional settings empty', () => {
    const env = parse(generate());
    const empty = Object.entries(env).filter(([, v]) => v === '').map(([k]) => k);
    expect(empty).toEqual(['CORS_ORIGINS', 'SMTP_URL', 'OTEL_EXPORTER_OTLP_ENDPOINT']);
    expect(env.JWT_SECRET).toMatch(/^[0-9a-f]{64}$/);
    expect(Buffer.from(env.ENCRYPTION_KEY, 'base64')).toHaveLength(32);
    for (const [k, v] of Object.entries(env)) if (k.endsWith('_PASSWORD')) expect(v).toMatch(/^[0-9a-f]{48}$/);
  });

  it('gives every process a private key that matches the shared public list, so each starts in production', () => {
    const env = parse(generate());
    const auths = INTERNAL_PRINCIPALS.map((name) =>
      internalAuthFromEnv(name, { NODE_ENV: 'production', SERVICE_PRIVATE_KEY: env[keyVar(name)], SERVICE_PUBLIC_KEYS: env.SERVICE_PUBLIC_KEYS }),
    );
    const [gateway, , crm] = auths;
    expect(crm.verify(gateway.sign({ orgId: 'o', userId: 'u', role: 'agent' }, 'crm.v1.CrmService/GetContact'), 'crm.v1.CrmService/GetContact')).toMatchObject({ orgId: 'o', caller: 'gateway' });
  });

  it('keeps the values of an existing .env and fills only what is missing', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'keys-'));
    try {
      const first = parse(generate());
      const existing = path.join(dir, '.env');
      writeFileSync(existing, Object.entries({ ...first, CRM_DB_PASSWORD: '' }).map(([k, v]) => `${k}=${v}`).join('\n'));
      const second = parse(generate(existing));
      expect(second.JWT_SECRET).toBe(first.JWT_SECRET);
      expect(second.SERVICE_PUBLIC_KEYS).toBe(first.SERVICE_PUBLIC_KEYS);
      expect(second.CRM_DB_PASSWORD).toMatch(/^[0-9a-f]{48}$/);
      expect(second.CRM_DB_PASSWORD).not.toBe(first.CRM_DB_PASSWORD);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
