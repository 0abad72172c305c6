import { randomBytes } from 'node:crypto';
import { AppError } from './errors';
import { devInternalAuth, generateInternalKeys, internalAuthFromEnv, mayCall } from './internal-auth';
import { privateKeyFromSeed, signInternalToken } from './internal-token';

const seed = randomBytes(32).toString('hex');
const ctx = { orgId: 'org-1', userId: 'user-1', role: 'agent', requestId: 'req-1', clientIp: '10.0.0.9' };

function refusal(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('internal credential', () => {
  const gateway = devInternalAuth('gateway', seed);
  const crm = devInternalAuth('crm', seed);
  const identity = devInternalAuth('identity', seed);

  it('carries the gateway-verified caller to the service it was signed for', () => {
    const token = gateway.sign(ctx, 'crm');
    expect(crm.verify(token, 'crm.v1.CrmService/GetContact', 'req-1')).toEqual({ ...ctx, caller: 'gateway' });
  });

  it('reuses a token only for the same caller and service', () => {
    const token = gateway.sign(ctx, 'crm');
    expect(gateway.sign({ ...ctx, requestId: 'req-2' }, 'crm')).toBe(token);
    expect(gateway.sign({ ...ctx, role: 'owner' }, 'crm')).not.toBe(token);
    expect(gateway.sign({ ...ctx, orgId: 'org-2' }, 'crm')).not.toBe(token);
    expect(gateway.sign({ ...ctx, clientIp: '10.0.0.10' }, 'crm')).not.toBe(token);
    expect(gateway.sign(ctx, 'identity')).not.toBe(token);
    // A remembered verification still checks the method against the caller's policy.
    const asCrm = crm.sign({ orgId: 'org-1' }, 'identity');
    expect(identity.verify(asCrm, 'identity.v1.IdentityService/GetUser').caller).toBe('crm');
    expect(refusal(() => identity.verify(asCrm, 'identity.v1.IdentityService/CreateUser')).kind).toBe('permission_denied');
  });

  it('is worthless at another service, without a token, or after tampering', () => {
    const token = gateway.sign(ctx, 'crm');
    expect(refusal(() => identity.verify(token, 'identity.v1.IdentityService/GetUser')).kind).toBe('unauthenticated');
    expect(refusal(() => crm.verify(undefined, 'crm.v1.CrmService/GetContact')).kind).toBe('unauthenticated');
    const [h, p, s] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), org: 'org-2' })).toString('base64url');
    expect(refusal(() => crm.verify(`${h}.${forged}.${s}`, 'crm.v1.CrmService/GetContact')).kind).toBe('unauthenticated');
  });

  it('refuses a token signed with another deployment’s keys', () => {
    const stranger = devInternalAuth('gateway', randomBytes(32).toString('hex'));
    expect(refusal(() => crm.verify(stranger.sign(ctx, 'crm'), 'crm.v1.CrmService/GetContact')).message).toMatch(/bad signature/);
  });

  it('refuses expired tokens and tokens that claim a long life', () => {
    const key = privateKeyFromSeed(randomBytes(32));
    const keys = generateInternalKeys(() => randomBytes(32));
    const auth = internalAuthFromEnv('crm', { SERVICE_PRIVATE_KEY: keys.privateKeys.crm, SERVICE_PUBLIC_KEYS: keys.publicKeys });
    const now = Math.floor(Date.now() / 1000);
    const base = { iss: 'gateway', aud: 'crm', org: 'o', sub: 'u', role: 'agent', scp: ['*'], ip: '' };
    const gatewayKey = privateKeyFromSeed(Buffer.from(keys.privateKeys.gateway, 'base64'));
    const expired = signInternalToken({ ...base, iat: now - 120, exp: now - 60 }, gatewayKey);
    expect(refusal(() => auth.verify(expired, 'crm.v1.CrmService/GetContact')).message).toMatch(/expired/);
    const longLived = signInternalToken({ ...base, iat: now, exp: now + 3600 }, gatewayKey);
    expect(refusal(() => auth.verify(longLived, 'crm.v1.CrmService/GetContact')).message).toMatch(/lifetime/);
    // A token whose issuer claim does not match the key that signed it.
    const misnamed = signInternalToken({ ...base, iat: now, exp: now + 30 }, key);
    expect(refusal(() => auth.verify(misnamed, 'crm.v1.CrmService/GetContact')).kind).toBe('unauthenticated');
  });

  it('lets a service call only the methods its policy lists', () => {
    const token = crm.sign({ orgId: 'org-1' }, 'identity');
    expect(identity.verify(token, 'identity.v1.IdentityService/GetUser')).toMatchObject({ orgId: 'org-1', userId: '', caller: 'crm' });
    const denied = refusal(() => identity.verify(token, 'identity.v1.IdentityService/CreateUser'));
    expect(denied.kind).toBe('permission_denied');
    expect(mayCall('gateway', 'crm.v1.CrmService/ListContacts')).toBe(true);
    expect(mayCall('gateway', 'connector.v1.ConnectorPeerService/PeerSend')).toBe(false);
    expect(mayCall('connector', 'connector.v1.ConnectorPeerService/PeerSend')).toBe(true);
    expect(mayCall('webhooks', 'identity.v1.IdentityService/GetUser')).toBe(false);
  });

  it('accepts two keys for one issuer while its key is rotated', () => {
    const before = generateInternalKeys(() => randomBytes(32));
    const after = generateInternalKeys(() => randomBytes(32));
    const newGatewayPublic = after.publicKeys.split(',').find((e) => e.startsWith('gateway='))!;
    // Step 1: every service accepts the gateway's old and new key; step 2: the gateway signs with the new one.
    const crmDuring = internalAuthFromEnv('crm', { SERVICE_PRIVATE_KEY: before.privateKeys.crm, SERVICE_PUBLIC_KEYS: `${before.publicKeys},${newGatewayPublic}` });
    const oldGateway = internalAuthFromEnv('gateway', { SERVICE_PRIVATE_KEY: before.privateKeys.gateway, SERVICE_PUBLIC_KEYS: before.publicKeys });
    const newGateway = internalAuthFromEnv('gateway', { SERVICE_PRIVATE_KEY: after.privateKeys.gateway, SERVICE_PUBLIC_KEYS: `${before.publicKeys},${newGatewayPublic}` });
    for (const gw of [oldGateway, newGateway]) expect(crmDuring.verify(gw.sign(ctx, 'crm'), 'crm.v1.CrmService/GetContact').orgId).toBe('org-1');
    // Step 3: the old key removed, tokens it signs are refused.
    const crmAfter = internalAuthFromEnv('crm', {
      SERVICE_PRIVATE_KEY: before.privateKeys.crm,
      SERVICE_PUBLIC_KEYS: `${before.publicKeys.split(',').filter((e) => !e.startsWith('gateway=')).join(',')},${newGatewayPublic}`,
    });
    expect(refusal(() => crmAfter.verify(oldGateway.sign(ctx, 'crm'), 'crm.v1.CrmService/GetContact')).kind).toBe('unauthenticated');
  });

  describe('configuration', () => {
    it('production refuses the development seed and needs a key pair', () => {
      expect(() => internalAuthFromEnv('crm', { NODE_ENV: 'production', INTERNAL_AUTH_SEED: seed })).toThrow(/INTERNAL_AUTH_SEED: is for development only/);
      expect(() => internalAuthFromEnv('crm', { NODE_ENV: 'production' })).toThrow(/SERVICE_PRIVATE_KEY: is required in production/);
      const keys = generateInternalKeys(() => randomBytes(32));
      const auth = internalAuthFromEnv('crm', { NODE_ENV: 'production', SERVICE_PRIVATE_KEY: keys.privateKeys.crm, SERVICE_PUBLIC_KEYS: keys.publicKeys });
      expect(auth.self).toBe('crm');
    });

    it('names the variable that is wrong', () => {
      const keys = generateInternalKeys(() => randomBytes(32));
      expect(() => internalAuthFromEnv('crm', {})).toThrow(/INTERNAL_AUTH_SEED: is required/);
      expect(() => internalAuthFromEnv('crm', { SERVICE_PUBLIC_KEYS: keys.publicKeys })).toThrow(/SERVICE_PRIVATE_KEY: is required/);
      expect(() => internalAuthFromEnv('crm', { SERVICE_PRIVATE_KEY: 'short', SERVICE_PUBLIC_KEYS: keys.publicKeys })).toThrow(/SERVICE_PRIVATE_KEY: must be a 32-byte/);
      expect(() => internalAuthFromEnv('crm', { SERVICE_PRIVATE_KEY: keys.privateKeys.ai, SERVICE_PUBLIC_KEYS: keys.publicKeys })).toThrow(/no key for crm matching/);
      expect(() => internalAuthFromEnv('crm', { SERVICE_PRIVATE_KEY: keys.privateKeys.crm, SERVICE_PUBLIC_KEYS: `${keys.publicKeys},intruder=abc` })).toThrow(/unknown entry/);
    });
  });
});
