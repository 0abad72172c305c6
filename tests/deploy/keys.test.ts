import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { grpcTransportFromEnv, INTERNAL_PRINCIPALS, internalAuthFromEnv } from '@crm/grpc-kit';

const root = path.resolve(__dirname, '../..');
const generate = (...args: string[]) => execFileSync(process.execPath, [path.join(root, 'scripts/generate-keys.mjs'), ...args], { encoding: 'utf8' });
const parse = (text: string) =>
  Object.fromEntries(
    text
      .split('\n')
      .map((l) => /^([A-Z0-9_]+)=(.*)$/.exec(l))
      .filter((m): m is RegExpExecArray => !!m)
      .map((m) => [m[1], m[2]]),
  );
const prefixOf = (name: string) => (name === 'connector' ? 'CHATNET_CONNECTOR' : name.toUpperCase());
const keyVar = (name: string) => `${prefixOf(name)}_PRIVATE_KEY`;
/** The host name compose and deploy/k8s give each process (the connector is named by its service). */
const hostOf = (name: string) => (name === 'connector' ? 'chatnet-connector' : name);
const certOf = (base64: string) => new X509Certificate(Buffer.from(base64, 'base64'));
const YEAR_MS = 365 * 24 * 60 * 60 * 1000;

// Each run that makes TLS material makes nine RSA keys: seconds on a loaded machine, twice in some tests.
jest.setTimeout(60_000);

describe('npm run keys: a deployment .env with every secret', () => {
  it('fills every secret of .env.example and leaves only optional settings empty', () => {
    const env = parse(generate());
    const empty = Object.entries(env)
      .filter(([, v]) => v === '')
      .map(([k]) => k);
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
    expect(
      crm.verify(gateway.sign({ orgId: 'o', userId: 'u', role: 'agent' }, 'crm.v1.CrmService/GetContact'), 'crm.v1.CrmService/GetContact'),
    ).toMatchObject({ orgId: 'o', caller: 'gateway' });
  });

  it('gives every process a certificate from one CA, for its host name, localhost and 127.0.0.1, as server and client, valid for years', () => {
    const env = parse(generate());
    const ca = certOf(env.GRPC_TLS_CA);
    expect(ca.ca).toBe(true);
    for (const name of INTERNAL_PRINCIPALS) {
      const tls = {
        GRPC_TLS_CA: env.GRPC_TLS_CA,
        GRPC_TLS_CERT: env[`${prefixOf(name)}_GRPC_TLS_CERT`],
        GRPC_TLS_KEY: env[`${prefixOf(name)}_GRPC_TLS_KEY`],
      };
      // The checks each process makes at start: the key is the certificate's, the CA issued it.
      expect(grpcTransportFromEnv({ NODE_ENV: 'production', ...tls }).secure).toBe(true);
      const cert = certOf(tls.GRPC_TLS_CERT);
      expect({ name, san: cert.subjectAltName?.split(', ') }).toEqual({
        name,
        san: [`DNS:${hostOf(name)}`, 'DNS:localhost', 'IP Address:127.0.0.1'],
      });
      // serverAuth and clientAuth: each process serves its port and calls the others with the same certificate.
      expect(cert.keyUsage).toEqual(expect.arrayContaining(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']));
      expect(cert.ca).toBe(false);
      expect(new Date(cert.validTo).getTime()).toBeGreaterThan(Date.now() + 9 * YEAR_MS);
      expect(new Date(cert.validFrom).getTime()).toBeLessThanOrEqual(Date.now());
    }
  });

  it('keeps the values of an existing .env and fills only what is missing', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'keys-'));
    try {
      const first = parse(generate());
      const existing = path.join(dir, '.env');
      writeFileSync(
        existing,
        Object.entries({ ...first, CRM_DB_PASSWORD: '' })
          .map(([k, v]) => `${k}=${v}`)
          .join('\n'),
      );
      const second = parse(generate(existing));
      expect(second.JWT_SECRET).toBe(first.JWT_SECRET);
      expect(second.SERVICE_PUBLIC_KEYS).toBe(first.SERVICE_PUBLIC_KEYS);
      expect(second.GRPC_TLS_CA).toBe(first.GRPC_TLS_CA);
      expect(second.CRM_GRPC_TLS_KEY).toBe(first.CRM_GRPC_TLS_KEY);
      expect(second.CRM_DB_PASSWORD).toMatch(/^[0-9a-f]{48}$/);
      expect(second.CRM_DB_PASSWORD).not.toBe(first.CRM_DB_PASSWORD);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('makes every TLS certificate anew, from a new CA, when one of them is missing (rotation: drop the GRPC_TLS_ lines)', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'keys-'));
    try {
      const first = parse(generate());
      const existing = path.join(dir, '.env');
      writeFileSync(
        existing,
        Object.entries({ ...first, AI_GRPC_TLS_CERT: '' })
          .map(([k, v]) => `${k}=${v}`)
          .join('\n'),
      );
      const second = parse(generate(existing));
      expect(second.GRPC_TLS_CA).not.toBe(first.GRPC_TLS_CA);
      expect(second.CRM_GRPC_TLS_CERT).not.toBe(first.CRM_GRPC_TLS_CERT);
      expect(
        grpcTransportFromEnv({ GRPC_TLS_CA: second.GRPC_TLS_CA, GRPC_TLS_CERT: second.AI_GRPC_TLS_CERT, GRPC_TLS_KEY: second.AI_GRPC_TLS_KEY })
          .secure,
      ).toBe(true);
      // The rest is kept.
      expect(second.JWT_SECRET).toBe(first.JWT_SECRET);
      expect(second.CRM_PRIVATE_KEY).toBe(first.CRM_PRIVATE_KEY);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
