import { randomBytes } from 'node:crypto';
import { AppError } from './errors';
import { devInternalAuth, generateInternalKeys, internalAuthFromEnv, mayCall } from './internal-auth';
import { EVENT_STAMP_TTL_SECONDS, signEventStamp } from './event-stamp';
import { GRANT_TTL_SECONDS, signGrant } from './grant';
import { privateKeyFromSeed, signInternalToken, signToken } from './internal-token';

const seed = randomBytes(32).toString('hex');
const ctx = { orgId: 'org-1', userId: 'user-1', role: 'agent', requestId: 'req-1', clientIp: '10.0.0.9' };
/** The signed token of a credential (what calls reuse), without the call's proof. */
const tokenPart = (credential: string) => credential.split('~')[0];

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
    const token = gateway.sign(ctx, 'crm.v1.CrmService/GetContact');
    expect(crm.verify(token, 'crm.v1.CrmService/GetContact', 'req-1')).toEqual({ ...ctx, caller: 'gateway', origin: tokenPart(token) });
  });

  it('reuses the signed token only for the same caller and service; each call gets its own proof', () => {
    const credential = gateway.sign(ctx, 'crm.v1.CrmService/GetContact');
    const token = tokenPart(credential);
    const again = gateway.sign({ ...ctx, requestId: 'req-2' }, 'crm.v1.CrmService/GetContact');
    expect(tokenPart(again)).toBe(token);
    expect(again).not.toBe(credential);
    expect(tokenPart(gateway.sign(ctx, 'crm.v1.CrmService/ListContacts'))).toBe(token);
    expect(tokenPart(gateway.sign({ ...ctx, role: 'owner' }, 'crm.v1.CrmService/GetContact'))).not.toBe(token);
    expect(tokenPart(gateway.sign({ ...ctx, orgId: 'org-2' }, 'crm.v1.CrmService/GetContact'))).not.toBe(token);
    expect(tokenPart(gateway.sign({ ...ctx, clientIp: '10.0.0.10' }, 'crm.v1.CrmService/GetContact'))).not.toBe(token);
    expect(tokenPart(gateway.sign(ctx, 'identity.v1.IdentityService/GetUser'))).not.toBe(token);
    // A remembered verification still checks the method against the caller's policy.
    const grant = gateway.signGrant('org-1', 'crm');
    const getUser = 'identity.v1.IdentityService/GetUser';
    expect(identity.verify(crm.sign({ orgId: 'org-1', origin: grant }, getUser), getUser, '', grant).caller).toBe('crm');
    const create = crm.sign({ orgId: 'org-1' }, 'identity.v1.IdentityService/CreateUser');
    expect(refusal(() => identity.verify(create, 'identity.v1.IdentityService/CreateUser')).kind).toBe('permission_denied');
  });

  it('is good for one call of the method it was made for', () => {
    const credential = gateway.sign(ctx, 'crm.v1.CrmService/GetContact');
    // Presented for another method (same service): the proof does not match.
    expect(refusal(() => crm.verify(credential, 'crm.v1.CrmService/DeleteContact')).message).toMatch(/does not match this call/);
    expect(crm.verify(credential, 'crm.v1.CrmService/GetContact').orgId).toBe('org-1');
    // Replayed: refused, though the token inside is still valid and a fresh proof for it is accepted.
    expect(refusal(() => crm.verify(credential, 'crm.v1.CrmService/GetContact')).message).toMatch(/replayed/);
    expect(crm.verify(gateway.sign(ctx, 'crm.v1.CrmService/GetContact'), 'crm.v1.CrmService/GetContact').orgId).toBe('org-1');
    // The token alone, or with a proof whose id or expiry was changed, is nothing.
    const [token, jti, exp, mac] = gateway.sign(ctx, 'crm.v1.CrmService/GetContact').split('~');
    expect(refusal(() => crm.verify(token, 'crm.v1.CrmService/GetContact')).message).toMatch(/malformed/);
    expect(refusal(() => crm.verify([token, `${jti}x`, exp, mac].join('~'), 'crm.v1.CrmService/GetContact')).message).toMatch(/does not match/);
    expect(refusal(() => crm.verify([token, jti, String(Number(exp) - 1), mac].join('~'), 'crm.v1.CrmService/GetContact')).message).toMatch(
      /does not match/,
    );
    // A proof made by another process that holds the token but not the gateway–crm key.
    const other = devInternalAuth('identity', seed);
    const [, jti2, exp2, mac2] = other.sign(ctx, 'crm.v1.CrmService/GetContact').split('~');
    expect(refusal(() => crm.verify([token, jti2, exp2, mac2].join('~'), 'crm.v1.CrmService/GetContact')).message).toMatch(/does not match/);
  });

  describe('origin: who vouches for the org', () => {
    const messaging = devInternalAuth('messaging', seed);
    const connector = devInternalAuth('connector', seed);
    const ai = devInternalAuth('ai', seed);
    const download = 'messaging.v1.Http/DownloadAttachment';
    const send = 'connector.v1.ConnectorService/SendChatMessage';

    it('follows a chain of calls: the next service sees who asked for the org', () => {
      // gateway → messaging → connector → messaging: the gateway's signed user is the origin all the way down.
      const atMessaging = messaging.verify(
        gateway.sign(ctx, 'messaging.v1.MessagingService/SendMessage'),
        'messaging.v1.MessagingService/SendMessage',
      );
      const atConnector = connector.verify(messaging.sign(atMessaging, send), send, '', atMessaging.origin);
      expect(atConnector.origin).toBe(atMessaging.origin);
      expect(messaging.verify(connector.sign(atConnector, download), download, '', atConnector.origin).orgId).toBe('org-1');
      // messaging acting on its own (a scheduled message): the org's grant is the origin, all the way down; its own
      // say-so is none.
      const grant = gateway.signGrant('org-2', 'messaging');
      const own = connector.verify(messaging.sign({ orgId: 'org-2', origin: grant }, send), send, '', grant);
      expect(messaging.verify(connector.sign(own, download), download, '', own.origin).orgId).toBe('org-2');
      expect(refusal(() => connector.verify(messaging.sign({ orgId: 'org-2' }, send), send)).code).toBe('origin_required');
    });

    it('lets no bound caller choose the org itself, nor borrow an origin for another org', () => {
      const alone = refusal(() => messaging.verify(connector.sign({ orgId: 'org-1' }, download), download));
      expect(alone).toMatchObject({ kind: 'permission_denied', code: 'origin_required' });
      // Its own credential passed as the origin is the same thing.
      const peer = 'connector.v1.ConnectorPeerService/PeerSend';
      const selfVouched = connector.verify(connector.sign({ orgId: 'org-1' }, peer), peer);
      expect(refusal(() => messaging.verify(connector.sign(selfVouched, download), download, '', selfVouched.origin)).code).toBe('origin_required');
      // An origin for org-1 does not carry a call for org-2.
      const origin = tokenPart(gateway.sign(ctx, 'messaging.v1.MessagingService/SendMessage'));
      const other = refusal(() => messaging.verify(connector.sign({ orgId: 'org-2', origin }, download), download, '', origin));
      expect(other).toMatchObject({ kind: 'permission_denied', code: 'origin_mismatch' });
      // A forged origin is no origin.
      const [h, , sig] = origin.split('.');
      const forged = `${h}.${Buffer.from(JSON.stringify({ org: 'org-2' })).toString('base64url')}.${sig}`;
      expect(refusal(() => messaging.verify(connector.sign({ orgId: 'org-2', origin: forged }, download), download, '', forged)).kind).toBe(
        'unauthenticated',
      );
      // The origin is covered by the proof: swapped after signing, the call is refused.
      const credential = connector.sign({ orgId: 'org-1', origin }, download);
      const ownToken = tokenPart(connector.sign({ orgId: 'org-1' }, download));
      expect(refusal(() => messaging.verify(credential, download, '', ownToken)).message).toMatch(/does not match/);
      // ai reads conversations only for a user's request.
      const read = 'messaging.v1.MessagingService/GetConversation';
      expect(refusal(() => messaging.verify(ai.sign({ orgId: 'org-1' }, read), read)).code).toBe('origin_required');
    });
  });

  describe("event stamps: the producer vouches for an event's org", () => {
    const connector = devInternalAuth('connector', seed);
    const messaging = devInternalAuth('messaging', seed);
    const upsert = 'crm.v1.CrmService/UpsertChatnetContact';
    const event = { id: 'ev-1', type: 'chatnet.inbound', orgId: 'org-1' };

    it('carries a call made for an event to the org the producer stamped, and no other', () => {
      const stamp = connector.stampEvent(event);
      expect(messaging.verifyEventStamp(stamp)).toMatchObject({ iss: 'connector', aud: 'event', org: 'org-1', eid: 'ev-1', typ: 'chatnet.inbound' });
      const atCrm = crm.verify(messaging.sign({ orgId: 'org-1', origin: stamp }, upsert), upsert, '', stamp);
      expect(atCrm).toMatchObject({ orgId: 'org-1', caller: 'messaging', origin: stamp });
      expect(refusal(() => crm.verify(messaging.sign({ orgId: 'org-2', origin: stamp }, upsert), upsert, '', stamp))).toMatchObject({
        kind: 'permission_denied',
        code: 'origin_mismatch',
      });
      expect(refusal(() => crm.verify(messaging.sign({ orgId: 'org-1' }, upsert), upsert)).code).toBe('origin_required');
    });

    it('is no voucher from the caller itself, from another deployment, or past its day', () => {
      // messaging stamping its own event vouches for nothing more than its own credential would.
      const own = messaging.stampEvent({ ...event, type: 'messaging.contact_link' });
      expect(refusal(() => crm.verify(messaging.sign({ orgId: 'org-1', origin: own }, upsert), upsert, '', own)).code).toBe('origin_required');
      const stranger = devInternalAuth('connector', randomBytes(32).toString('hex')).stampEvent(event);
      expect(refusal(() => crm.verify(messaging.sign({ orgId: 'org-1', origin: stranger }, upsert), upsert, '', stranger)).message).toMatch(
        /origin: bad signature/,
      );
      expect(() => messaging.verifyEventStamp(stranger)).toThrow(/bad signature/);
      const keys = generateInternalKeys(() => randomBytes(32));
      const connectorKey = privateKeyFromSeed(Buffer.from(keys.privateKeys.connector, 'base64'));
      const auth = internalAuthFromEnv('crm', { SERVICE_PRIVATE_KEY: keys.privateKeys.crm, SERVICE_PUBLIC_KEYS: keys.publicKeys });
      const now = Math.floor(Date.now() / 1000);
      expect(() => auth.verifyEventStamp(signEventStamp('connector', event, connectorKey, now - EVENT_STAMP_TTL_SECONDS - 60))).toThrow(/expired/);
      const claims = { iss: 'connector', aud: 'event', org: 'org-1', eid: 'ev-1', typ: 'chatnet.inbound' };
      const tooLong = { ...claims, iat: now, exp: now + 2 * EVENT_STAMP_TTL_SECONDS };
      expect(() => auth.verifyEventStamp(signToken(tooLong, connectorKey))).toThrow(/lifetime too long/);
      // A credential is not a stamp, and a stamp is not a credential.
      expect(() => auth.verifyEventStamp(tokenPart(devInternalAuth('gateway', seed).sign(ctx, upsert)))).toThrow();
      const stamp = connector.stampEvent(event);
      expect(refusal(() => crm.verify(`${stamp}~j~0~m`, upsert)).message).toMatch(/another service/);
    });
  });

  describe("stamp seals: a consumer checks the producer's stamp with the key they share", () => {
    const event = { id: 'ev-1', type: 'chatnet.inbound', orgId: 'org-1' };
    const connector = devInternalAuth('connector', seed);
    // Each check by a fresh consumer: a verified stamp is remembered, and the next check would not look at the seal.
    const messaging = () => devInternalAuth('messaging', seed);
    /** The stamp with another signature: only a seal can vouch for it. */
    const resigned = (stamp: string) => `${stamp.slice(0, stamp.lastIndexOf('.'))}.${randomBytes(64).toString('base64url')}`;

    it('vouches for the stamp as its signature would: the seal, not the signature, is what the consumer checks', () => {
      const stamp = connector.stampEvent(event);
      const seal = connector.sealStamp(stamp, ['messaging']);
      expect(seal).toMatch(/^messaging:[A-Za-z0-9_-]{43}$/);
      expect(messaging().verifyEventStamp(stamp, seal)).toMatchObject({ iss: 'connector', org: 'org-1', eid: 'ev-1', typ: 'chatnet.inbound' });
      // A stamp whose signature does not verify passes on its seal alone, and only with it.
      const other = resigned(stamp);
      expect(messaging().verifyEventStamp(other, connector.sealStamp(other, ['messaging']))).toMatchObject({ org: 'org-1', eid: 'ev-1' });
      expect(() => messaging().verifyEventStamp(other)).toThrow(/bad signature/);
      // The seal covers the whole stamp: the same seal on another stamp is the signature's to judge.
      expect(() => messaging().verifyEventStamp(other, seal)).toThrow(/bad signature/);
    });

    it('is made only by the producer for that consumer: any other seal leaves the signature to decide', () => {
      const forged = resigned(connector.stampEvent(event));
      const crm = devInternalAuth('crm', seed);
      const sealFor = (sealer: typeof connector, consumers: string[]) => sealer.sealStamp(forged, consumers);
      for (const seal of [
        sealFor(crm, ['messaging']), // another service's key with messaging
        sealFor(connector, ['crm']), // the connector's seal for crm
        sealFor(connector, ['crm']).replace('crm:', 'messaging:'), // ... relabelled
        sealFor(devInternalAuth('connector', randomBytes(32).toString('hex')), ['messaging']), // another deployment's
        'messaging:',
        'garbage',
      ])
        expect(() => messaging().verifyEventStamp(forged, seal)).toThrow(/bad signature/);
      // A genuine stamp with a wrong seal still passes on its signature.
      const stamp = connector.stampEvent(event);
      expect(messaging().verifyEventStamp(stamp, sealFor(crm, ['messaging']))).toMatchObject({ eid: 'ev-1' });
    });

    it('vouches for nothing past its day, and names only services the deployment has keys for, never its sealer', () => {
      const keys = generateInternalKeys(() => randomBytes(32));
      const env = (self: 'connector' | 'messaging') =>
        internalAuthFromEnv(self, { SERVICE_PRIVATE_KEY: keys.privateKeys[self], SERVICE_PUBLIC_KEYS: keys.publicKeys });
      const connectorKey = privateKeyFromSeed(Buffer.from(keys.privateKeys.connector, 'base64'));
      const old = signEventStamp('connector', event, connectorKey, Math.floor(Date.now() / 1000) - EVENT_STAMP_TTL_SECONDS - 60);
      expect(() => env('messaging').verifyEventStamp(old, env('connector').sealStamp(old, ['messaging']))).toThrow(/expired/);
      const stamp = connector.stampEvent(event);
      expect(
        connector
          .sealStamp(stamp, ['messaging', 'nobody', 'connector'])
          .split(',')
          .map((e) => e.split(':')[0]),
      ).toEqual(['messaging']);
      expect(connector.sealStamp(stamp, [])).toBe('');
    });

    it("is checked with either of the consumer's keys while its key is rotated", () => {
      const before = generateInternalKeys(() => randomBytes(32));
      const after = generateInternalKeys(() => randomBytes(32));
      const newMessaging = after.publicKeys.split(',').find((e) => e.startsWith('messaging='))!;
      const publicKeys = `${before.publicKeys},${newMessaging}`;
      const auth = (self: 'connector' | 'messaging', privateKey: string) =>
        internalAuthFromEnv(self, { SERVICE_PRIVATE_KEY: privateKey, SERVICE_PUBLIC_KEYS: publicKeys });
      const producer = auth('connector', before.privateKeys.connector);
      const stamp = resigned(producer.stampEvent(event));
      const seal = producer.sealStamp(stamp, ['messaging']);
      expect(seal.split(':')[1].split('.')).toHaveLength(2);
      for (const key of [before.privateKeys.messaging, after.privateKeys.messaging])
        expect(auth('messaging', key).verifyEventStamp(stamp, seal)).toMatchObject({ eid: 'ev-1' });
    });
  });

  describe('grants: the gateway vouches for an org automation acts for on its own', () => {
    const automation = devInternalAuth('automation', seed);
    const messaging = devInternalAuth('messaging', seed);
    const send = 'messaging.v1.MessagingService/SendMessage';
    const brief = 'crm.v1.CrmService/GetContactBrief';

    it("carries automation's calls for the granted org, and down the chain it starts", () => {
      const grant = gateway.signGrant('org-1', 'automation');
      expect(automation.verifyGrant(grant)).toMatchObject({ iss: 'gateway', aud: 'grant', org: 'org-1', svc: 'automation' });
      const atMessaging = messaging.verify(automation.sign({ orgId: 'org-1', origin: grant }, send), send, '', grant);
      expect(atMessaging).toMatchObject({ orgId: 'org-1', caller: 'automation', origin: grant });
      // messaging serving that send asks crm for the thread's contact under the same grant.
      const upsert = 'crm.v1.CrmService/UpsertChatnetContact';
      expect(crm.verify(messaging.sign(atMessaging, upsert), upsert, '', atMessaging.origin).orgId).toBe('org-1');
    });

    it('is required for every call automation makes, and carries none for another org', () => {
      for (const method of [send, brief, 'identity.v1.IdentityService/GetUser', 'connector.v1.ConnectorService/GetAccount']) {
        const callee = devInternalAuth(method.startsWith('crm') ? 'crm' : method.startsWith('identity') ? 'identity' : 'connector', seed);
        const target = method.startsWith('messaging') ? messaging : callee;
        expect(refusal(() => target.verify(automation.sign({ orgId: 'org-1' }, method), method)).code).toBe('origin_required');
      }
      const grant = gateway.signGrant('org-1', 'automation');
      expect(refusal(() => crm.verify(automation.sign({ orgId: 'org-2', origin: grant }, brief), brief, '', grant)).code).toBe('origin_mismatch');
    });

    it('is made by the gateway only, within its lifetime, with this deployment’s key', () => {
      expect(() => automation.signGrant('org-1', 'automation')).toThrow(/only the gateway/);
      const keys = generateInternalKeys(() => randomBytes(32));
      const automationKey = privateKeyFromSeed(Buffer.from(keys.privateKeys.automation, 'base64'));
      const gatewayKey = privateKeyFromSeed(Buffer.from(keys.privateKeys.gateway, 'base64'));
      const auth = internalAuthFromEnv('crm', { SERVICE_PRIVATE_KEY: keys.privateKeys.crm, SERVICE_PUBLIC_KEYS: keys.publicKeys });
      const now = Math.floor(Date.now() / 1000);
      const claims = { aud: 'grant', org: 'org-1', svc: 'automation', iat: now, exp: now + 3600 };
      // automation signing a grant for itself: refused whatever it claims.
      expect(() => auth.verifyGrant(signToken({ ...claims, iss: 'automation' }, automationKey))).toThrow(/gateway only/);
      expect(() => auth.verifyGrant(signToken({ ...claims, iss: 'gateway' }, gatewayKey))).not.toThrow();
      expect(() => auth.verifyGrant(signGrant('org-1', 'automation', gatewayKey, now - GRANT_TTL_SECONDS - 60))).toThrow(/expired/);
      const tooLong = { ...claims, iss: 'gateway', exp: now + 2 * GRANT_TTL_SECONDS };
      expect(() => auth.verifyGrant(signToken(tooLong, gatewayKey))).toThrow(/too long/);
      expect(() => auth.verifyGrant(devInternalAuth('gateway', randomBytes(32).toString('hex')).signGrant('org-1', 'automation'))).toThrow(
        /bad signature/,
      );
      // A grant is neither a stamp nor a credential.
      const grant = gateway.signGrant('org-1', 'automation');
      expect(() => crm.verifyEventStamp(grant)).toThrow(/not an event stamp/);
      expect(refusal(() => crm.verify(`${grant}~j~0~m`, brief)).message).toMatch(/another service/);
    });
  });

  it('is worthless at another service, without a token, or after tampering', () => {
    const token = gateway.sign(ctx, 'crm.v1.CrmService/GetContact');
    expect(refusal(() => identity.verify(token, 'identity.v1.IdentityService/GetUser')).kind).toBe('unauthenticated');
    expect(refusal(() => crm.verify(undefined, 'crm.v1.CrmService/GetContact')).kind).toBe('unauthenticated');
    const [t, ...proof] = token.split('~');
    const [h, p, s] = t.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), org: 'org-2' })).toString('base64url');
    expect(refusal(() => crm.verify([`${h}.${forged}.${s}`, ...proof].join('~'), 'crm.v1.CrmService/GetContact')).kind).toBe('unauthenticated');
  });

  it('refuses a token signed with another deployment’s keys', () => {
    const stranger = devInternalAuth('gateway', randomBytes(32).toString('hex'));
    expect(refusal(() => crm.verify(stranger.sign(ctx, 'crm.v1.CrmService/GetContact'), 'crm.v1.CrmService/GetContact')).message).toMatch(
      /bad signature/,
    );
  });

  it('refuses expired tokens and tokens that claim a long life', () => {
    const key = privateKeyFromSeed(randomBytes(32));
    const keys = generateInternalKeys(() => randomBytes(32));
    const auth = internalAuthFromEnv('crm', { SERVICE_PRIVATE_KEY: keys.privateKeys.crm, SERVICE_PUBLIC_KEYS: keys.publicKeys });
    const now = Math.floor(Date.now() / 1000);
    const base = { iss: 'gateway', aud: 'crm', org: 'o', sub: 'u', role: 'agent', scp: ['*'], ip: '' };
    const gatewayKey = privateKeyFromSeed(Buffer.from(keys.privateKeys.gateway, 'base64'));
    // (The token is checked before the proof beside it.)
    const expired = signInternalToken({ ...base, iat: now - 120, exp: now - 60 }, gatewayKey);
    expect(refusal(() => auth.verify(`${expired}~j~0~m`, 'crm.v1.CrmService/GetContact')).message).toMatch(/expired/);
    const longLived = signInternalToken({ ...base, iat: now, exp: now + 3600 }, gatewayKey);
    expect(refusal(() => auth.verify(`${longLived}~j~0~m`, 'crm.v1.CrmService/GetContact')).message).toMatch(/lifetime/);
    // A token whose issuer claim does not match the key that signed it.
    const misnamed = signInternalToken({ ...base, iat: now, exp: now + 30 }, key);
    expect(refusal(() => auth.verify(`${misnamed}~j~0~m`, 'crm.v1.CrmService/GetContact')).kind).toBe('unauthenticated');
  });

  it('lets a service call only the methods its policy lists', () => {
    // crm on its own (a report's names): under the org's grant.
    const grant = gateway.signGrant('org-1', 'crm');
    const getUser = 'identity.v1.IdentityService/GetUser';
    expect(identity.verify(crm.sign({ orgId: 'org-1', origin: grant }, getUser), getUser, '', grant)).toMatchObject({
      orgId: 'org-1',
      userId: '',
      caller: 'crm',
    });
    const denied = refusal(() =>
      identity.verify(crm.sign({ orgId: 'org-1' }, 'identity.v1.IdentityService/CreateUser'), 'identity.v1.IdentityService/CreateUser'),
    );
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
    const crmDuring = internalAuthFromEnv('crm', {
      SERVICE_PRIVATE_KEY: before.privateKeys.crm,
      SERVICE_PUBLIC_KEYS: `${before.publicKeys},${newGatewayPublic}`,
    });
    const oldGateway = internalAuthFromEnv('gateway', { SERVICE_PRIVATE_KEY: before.privateKeys.gateway, SERVICE_PUBLIC_KEYS: before.publicKeys });
    const newGateway = internalAuthFromEnv('gateway', {
      SERVICE_PRIVATE_KEY: after.privateKeys.gateway,
      SERVICE_PUBLIC_KEYS: `${before.publicKeys},${newGatewayPublic}`,
    });
    for (const gw of [oldGateway, newGateway])
      expect(crmDuring.verify(gw.sign(ctx, 'crm.v1.CrmService/GetContact'), 'crm.v1.CrmService/GetContact').orgId).toBe('org-1');
    // Step 3: the old key removed, tokens it signs are refused.
    const crmAfter = internalAuthFromEnv('crm', {
      SERVICE_PRIVATE_KEY: before.privateKeys.crm,
      SERVICE_PUBLIC_KEYS: `${before.publicKeys
        .split(',')
        .filter((e) => !e.startsWith('gateway='))
        .join(',')},${newGatewayPublic}`,
    });
    expect(refusal(() => crmAfter.verify(oldGateway.sign(ctx, 'crm.v1.CrmService/GetContact'), 'crm.v1.CrmService/GetContact')).kind).toBe(
      'unauthenticated',
    );
  });

  describe('configuration', () => {
    it('production refuses the development seed and needs a key pair', () => {
      expect(() => internalAuthFromEnv('crm', { NODE_ENV: 'production', INTERNAL_AUTH_SEED: seed })).toThrow(
        /INTERNAL_AUTH_SEED: is for development only/,
      );
      expect(() => internalAuthFromEnv('crm', { NODE_ENV: 'production' })).toThrow(/SERVICE_PRIVATE_KEY: is required in production/);
      const keys = generateInternalKeys(() => randomBytes(32));
      const auth = internalAuthFromEnv('crm', {
        NODE_ENV: 'production',
        SERVICE_PRIVATE_KEY: keys.privateKeys.crm,
        SERVICE_PUBLIC_KEYS: keys.publicKeys,
      });
      expect(auth.self).toBe('crm');
    });

    it('names the variable that is wrong', () => {
      const keys = generateInternalKeys(() => randomBytes(32));
      expect(() => internalAuthFromEnv('crm', {})).toThrow(/INTERNAL_AUTH_SEED: is required/);
      expect(() => internalAuthFromEnv('crm', { SERVICE_PUBLIC_KEYS: keys.publicKeys })).toThrow(/SERVICE_PRIVATE_KEY: is required/);
      expect(() => internalAuthFromEnv('crm', { SERVICE_PRIVATE_KEY: 'short', SERVICE_PUBLIC_KEYS: keys.publicKeys })).toThrow(
        /SERVICE_PRIVATE_KEY: must be a 32-byte/,
      );
      expect(() => internalAuthFromEnv('crm', { SERVICE_PRIVATE_KEY: keys.privateKeys.ai, SERVICE_PUBLIC_KEYS: keys.publicKeys })).toThrow(
        /no key for crm matching/,
      );
      expect(() =>
        internalAuthFromEnv('crm', { SERVICE_PRIVATE_KEY: keys.privateKeys.crm, SERVICE_PUBLIC_KEYS: `${keys.publicKeys},intruder=abc` }),
      ).toThrow(/unknown entry/);
    });
  });
});
