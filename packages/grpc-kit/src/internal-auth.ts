import { createHmac, KeyObject, randomBytes, timingSafeEqual } from 'node:crypto';
import { ConfigError } from '@crm/config';
import { BoundedCache } from './bounded-cache';
import { callKey, stampSealKey, x25519PrivateOf, x25519PublicOf } from './call-keys';
import { CallContext } from './context';
import { AppError } from './errors';
import { checkStampClaims, EVENT_STAMP_AUDIENCE, EventStampClaims, signEventStamp, StampedEvent, verifyEventStamp } from './event-stamp';
import { claimedAudience, GRANT_AUDIENCE, GrantClaims, signGrant, verifyGrant } from './grant';
import {
  InternalClaims,
  privateKeyFromSeed,
  publicKeyFromRaw,
  rawPublicKey,
  readSigned,
  seedFor,
  signInternalToken,
  TokenError,
  verifyInternalTokenWithKey,
} from './internal-token';

/**
 * Who may call whom inside the system. The gateway signs the verified caller (org, user, role, request id)
 * into a short-lived token for the one service it calls; services calling each other sign with their own key
 * and may call only the methods listed here. Every server checks the token before any handler runs, so a
 * reachable port alone grants nothing.
 */
export const INTERNAL_PRINCIPALS = ['gateway', 'identity', 'crm', 'messaging', 'connector', 'automation', 'ai', 'webhooks'] as const;
export type InternalPrincipal = (typeof INTERNAL_PRINCIPALS)[number];

/** `package.Service/Method` a service (not the gateway) may call, and nothing else. */
export const SERVICE_CALL_POLICY: Record<Exclude<InternalPrincipal, 'gateway'>, readonly string[]> = {
  identity: [],
  webhooks: [],
  crm: [
    'identity.v1.IdentityService/GetUser',
    'identity.v1.IdentityService/ListUsers',
    'messaging.v1.MessagingService/ContactConversations',
    // A task's conversationId: the org's, and visible to the caller.
    'messaging.v1.MessagingService/GetConversation',
    // hasChatnet: whether a contact's phone number is on the chat network.
    'connector.v1.ConnectorService/LookupPhone',
    // Response times counted in open hours only (analytics with businessHours=true, issue #29).
    'messaging.v1.ServiceLevelsService/ListBusinessHours',
  ],
  messaging: [
    'identity.v1.IdentityService/GetUser',
    'identity.v1.IdentityService/GetTeam',
    // Resolving `@email` mentions in private notes.
    'identity.v1.IdentityService/ListUsers',
    'crm.v1.CrmService/UpsertChatnetContact',
    'crm.v1.CrmService/UpsertChatnetContacts',
    'crm.v1.CrmService/GetContactBrief',
    'connector.v1.ConnectorService/SendChatMessage',
    // Telling the network the account read a conversation's messages (after an agent marked it read).
    'connector.v1.ConnectorService/MarkThreadSeen',
    // Recalling a message and reacting to one on the network (issue #26).
    'connector.v1.ConnectorService/RecallChatMessage',
    'connector.v1.ConnectorService/ReactToChatMessage',
    // Auto-assignment settings exist only for the caller's org's own accounts.
    'connector.v1.ConnectorService/GetAccount',
    // Starting a conversation (issue #26): who a phone or uid is on the network, the account to use, and the
    // contact to link (found by id, phone or uid, or created).
    'connector.v1.ConnectorService/FindUser',
    'connector.v1.ConnectorService/ListAccounts',
    'crm.v1.CrmService/LinkOutreachContact',
    // The guarded auto-reply (issue #32 item 5): an answer, or a hand-off, for a customer's message on an account in
    // the org's list. Sent from a due row long after the inbound event, so no origin vouches for it then (unbound).
    'ai.v1.AiService/AutoReply',
  ],
  automation: [
    'identity.v1.IdentityService/GetUser',
    'crm.v1.CrmService/GetContactBrief',
    'crm.v1.CrmService/PatchContact',
    'crm.v1.CrmService/GetCustomerList',
    'crm.v1.CrmService/ResolveListMembers',
    // The create_task action (and, for assignTo conversation_assignee, the conversation's assignee).
    'crm.v1.TaskService/CreateTask',
    'messaging.v1.MessagingService/GetConversation',
    'messaging.v1.MessagingService/LatestConversationForContact',
    // A campaign's page of recipients at once.
    'messaging.v1.MessagingService/LatestConversationsForContacts',
    'messaging.v1.MessagingService/SendMessage',
    // The assign_round_robin action.
    'messaging.v1.MessagingService/AssignRoundRobin',
    // The set_priority action (issue #29).
    'messaging.v1.MessagingService/SetConversationPriority',
    // Campaigns reach leads who never wrote (issue #26): a conversation is started for them; the campaign's account is the org's.
    'messaging.v1.MessagingService/StartConversation',
    'connector.v1.ConnectorService/GetAccount',
  ],
  ai: ['messaging.v1.MessagingService/GetConversation'],
  // Connector instances forward live-session work to the instance holding the account's lease.
  connector: [
    'identity.v1.IdentityService/GetUser',
    'connector.v1.ConnectorPeerService/PeerSend',
    'connector.v1.ConnectorPeerService/PeerMarkSeen',
    'connector.v1.ConnectorPeerService/PeerSandbox',
    'connector.v1.ConnectorPeerService/PeerRelease',
    'connector.v1.ConnectorPeerService/PeerLookupPhone',
    'connector.v1.ConnectorPeerService/PeerRecall',
    'connector.v1.ConnectorPeerService/PeerReact',
    'connector.v1.ConnectorPeerService/PeerFindUser',
    'connector.v1.ConnectorPeerService/PeerSendFriendRequest',
    // Files both ways (messaging's attachments HTTP port): the bytes of a file being sent, and storing a received one.
    'messaging.v1.Http/DownloadAttachment',
    'messaging.v1.Http/UploadAttachment',
  ],
};

/** The gateway may call every client-facing method, but not the connectors' peer-to-peer service. */
const GATEWAY_DENIED_PREFIXES = ['connector.v1.ConnectorPeerService/'];

/** The audience of a method: the root of its proto package (`crm.v1.ScoringService/X` → `crm`). */
export const audienceOf = (fullMethod: string) => fullMethod.slice(0, fullMethod.indexOf('.'));

export function mayCall(issuer: string, fullMethod: string): boolean {
  if (issuer === 'gateway') return !GATEWAY_DENIED_PREFIXES.some((p) => fullMethod.startsWith(p));
  const allowed = (SERVICE_CALL_POLICY as Record<string, readonly string[] | undefined>)[issuer];
  return !!allowed && allowed.includes(fullMethod);
}

/**
 * The code of a refused internal credential: a deployment's keys that do not match (or a process reaching another
 * deployment's service), never the end user's fault, so the gateway answers 502 for it rather than a 401 that would
 * sign the user out.
 */
export const INTERNAL_CREDENTIAL_REFUSED = 'internal_credential_refused';

export const TOKEN_TTL_SECONDS = 60;
/**
 * A call's proof is checked when the call arrives, so it needs to live only as long as a call takes to get there
 * (plus clock skew); its unique id is remembered that long and refused a second time.
 */
export const PROOF_TTL_SECONDS = 30;
const CLOCK_SKEW_SECONDS = 5;
/** A signed token is reused for calls with the same caller while more than this much of its life is left. */
const REUSE_WHILE_SECONDS_LEFT = TOKEN_TTL_SECONDS / 2;
/** Bound on each cache (signed tokens, verified tokens); past it the oldest entries go. */
const CACHE_ENTRIES = 10_000;
/** Bound on the call ids remembered (30 s of calls at well beyond this process's throughput). */
const SEEN_CALLS_MAX = 500_000;

/**
 * Methods a service may call only for an org that someone other than itself vouched for: the gateway's signed user,
 * the service whose call it is serving (its credential travels down the chain as the call's origin), or the producer
 * of the event it is acting on (the event's stamp, event-stamp.ts). A compromised caller cannot choose the org; at
 * most it can reuse, for the same org, an origin it was handed: a request's for a minute, an event's for a day.
 * automation, which acts on timers long after any request or event (rule waits of up to 90 days, campaigns, reminders),
 * sends the org's grant: the gateway's signature, renewed daily while the org is in use (grant.ts).
 */
export const ORIGIN_BOUND: Partial<Record<InternalPrincipal, readonly string[]>> = {
  // Every call automation makes: under the org's grant, the triggering event's stamp, or the request it serves.
  automation: SERVICE_CALL_POLICY.automation,
  // A file being sent: the org is the one messaging (or a user through messaging) asked the connector to send for; a
  // received file is stored under the org's grant (the connector's own session work); an account's owner is looked up
  // for the request listing it. The peer calls are not bound: their callee is the connector itself, with the same
  // database and sessions, so an origin would vouch for nothing it could not do already.
  connector: ['messaging.v1.Http/DownloadAttachment', 'messaging.v1.Http/UploadAttachment', 'identity.v1.IdentityService/GetUser'],
  // Every AI call is a user's request through the gateway.
  ai: ['messaging.v1.MessagingService/GetConversation'],
  // Every call crm makes: for the request it serves (a contact's conversations, a task's conversation or assignee, the
  // open hours or team of analytics), else, for its own workers (report names, phone checks), under the org's grant.
  crm: SERVICE_CALL_POLICY.crm,
  // Every call messaging makes: under the request or event it serves (a thread's contact under the connector's stamp
  // of the inbound message; the AI auto-reply under the customer's message's stamp, kept on its queued row), else,
  // acting on its own (a scheduled message, an auto-reply's send, the assignment repair, a read receipt), under the
  // org's grant (grant.ts).
  messaging: SERVICE_CALL_POLICY.messaging,
};

/**
 * The call ids seen until their proof expires. Entries arrive in about the order they expire (every proof lives
 * PROOF_TTL_SECONDS from its signing), so expired ones are dropped from the front as calls come in: no timer.
 */
class SeenCalls {
  private readonly map = new Map<string, number>();
  /** False when `id` was seen before (a replay). */
  add(id: string, exp: number, now: number): boolean {
    for (const [k, e] of this.map) {
      if (e >= now - CLOCK_SKEW_SECONDS && this.map.size < SEEN_CALLS_MAX) break;
      this.map.delete(k);
    }
    if (this.map.has(id)) return false;
    this.map.set(id, exp);
    return true;
  }
}

/** What the proof's HMAC covers: the method, the call's id and expiry, the token (by its signature) and the origin. */
const proofInput = (method: string, jti: string, exp: number, token: string, origin: string) =>
  `${method}\n${jti}\n${exp}\n${token.slice(token.lastIndexOf('.') + 1)}\n${origin}`;

const macOf = (key: Buffer, input: string) => createHmac('sha256', key).update(input).digest('base64url');

function sameMac(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

const JTI = /^[A-Za-z0-9_-]{1,64}$/;

/** What a stamp's seal covers: the whole stamp (its claims and its signature). */
const sealInput = (stamp: string) => `event-stamp\n${stamp}`;

export interface InternalAuth {
  readonly self: InternalPrincipal;
  /**
   * The credential for one call of `method` (`package.Service/Method`), carrying `ctx` (a service acting on its own
   * has no user: `service:<self>`): a token naming the caller, for the called service only, and a proof that binds
   * it to this method, a unique id and the call's origin (`ctx.origin`, sent beside it). Good for one call.
   * The request id is not in it: it travels beside the credential (`x-request-id`) and only labels logs.
   */
  sign(ctx: Partial<CallContext>, method: string): string;
  /**
   * The caller's context from a credential, or AppError `unauthenticated` (no, bad, expired, replayed, foreign
   * credential, or one made for another method) or `permission_denied` (a service calling outside its policy, or for
   * an org its origin does not vouch for). `operation` is `package.Service/Method`; `origin` the token sent beside it.
   */
  verify(credential: string | undefined, operation: string, requestId?: string, origin?: string): CallContext;
  /** The stamp of an event this process publishes (signed once per publish, EVENT_STAMP_TTL_SECONDS). */
  stampEvent(event: StampedEvent): string;
  /**
   * A stamp's seal for the services that consume its event (`messaging:<mac>,ai:<mac>`): an HMAC of the whole stamp
   * under the key this process shares with each of them (one per key it is listed with, two while its key is rotated).
   * A consumer that finds its own checks the stamp with it (~16 µs, parsing included) instead of the signature
   * (~120 µs on this machine's cores); only this process and that consumer hold the key, so no other service can make
   * one. Services the deployment lists no key for are left out.
   */
  sealStamp(stamp: string, consumers: readonly string[]): string;
  /**
   * The claims of an event stamp signed by its issuer and still within its lifetime (remembered once verified, a bounded
   * cache); TokenError otherwise. With the stamp's `seal` (sealStamp), an entry for this process that matches vouches for
   * the stamp as its signature would; without one, or one that does not match, the signature is checked. Which issuers
   * may stamp which types is the event catalogue's, checked by consumers.
   */
  verifyEventStamp(stamp: string, seal?: string): EventStampClaims;
  /** The gateway only: a grant for `service` to act for `orgId` on its own (grant.ts). Other processes throw. */
  signGrant(orgId: string, service: InternalPrincipal): string;
  /** The claims of a grant the gateway signed, still within its lifetime; TokenError otherwise. */
  verifyGrant(grant: string): GrantClaims;
}

/**
 * The keys this process shares with each other process for one purpose (call proofs, stamp seals), derived once and
 * kept: `to(peer)` one per key the peer is listed with (two while its key is rotated), `from(peerKey, peer)` the one for
 * the key that verified the peer.
 */
function pairKeyring(
  derive: (mine: KeyObject, theirs: KeyObject, from: string, to: string) => Buffer,
  self: string,
  exchange: KeyObject,
  publicKeys: ReadonlyMap<string, readonly KeyObject[]>,
): { to(peer: string): Buffer[]; from(peerKey: KeyObject, peer: string): Buffer } {
  const outgoing = new Map<string, Buffer[]>();
  const incoming = new Map<KeyObject, Buffer>();
  return {
    to(peer) {
      let keys = outgoing.get(peer);
      if (!keys) {
        keys = (publicKeys.get(peer) ?? []).map((k) => derive(exchange, x25519PublicOf(k), self, peer));
        outgoing.set(peer, keys);
      }
      return keys;
    },
    from(peerKey, peer) {
      let key = incoming.get(peerKey);
      if (!key) {
        key = derive(exchange, x25519PublicOf(peerKey), peer, self);
        incoming.set(peerKey, key);
      }
      return key;
    },
  };
}

export function createInternalAuth(
  self: InternalPrincipal,
  privateKey: KeyObject,
  publicKeys: ReadonlyMap<string, readonly KeyObject[]>,
): InternalAuth {
  const scopes = self === 'gateway' ? ['*'] : [...SERVICE_CALL_POLICY[self]];
  // Ed25519 costs about 30 µs to sign and 75 µs to verify on a small core: per call that would be a real share of a
  // request. A token carries only the caller (no request id, no method), so the same caller's token is reused for half
  // its life and a verified token is remembered until it expires; both caches are bounded. What makes each call's
  // credential single-use and bound to its method is the proof beside the token (an HMAC under the pair's call key).
  const signed = new BoundedCache<{ token: string; exp: number }>(CACHE_ENTRIES);
  const verified = new BoundedCache<{ claims: InternalClaims; callKey: Buffer }>(CACHE_ENTRIES);
  /** Verified origins (forwarded credentials and event stamps): who vouches, for which org, until when. */
  const origins = new BoundedCache<{ iss: string; org: string; exp: number }>(CACHE_ENTRIES);
  const stamps = new BoundedCache<EventStampClaims>(CACHE_ENTRIES);
  const seen = new SeenCalls();
  const exchange = x25519PrivateOf(privateKey);
  // Keys to prove calls to each service and to check calls from each caller key (the key that verified its token).
  const callKeys = pairKeyring(callKey, self, exchange, publicKeys);
  // Keys to seal stamps for each consumer and to check the seals of each issuer key.
  const sealKeys = pairKeyring(stampSealKey, self, exchange, publicKeys);
  /** The claims of a stamp whose seal has a matching entry for this process; undefined when it has none that matches. */
  const unsealed = (stamp: string, seal: string, now: number): EventStampClaims | undefined => {
    const mine = seal.split(',').find((entry) => entry.startsWith(`${self}:`));
    if (!mine) return undefined;
    let read: ReturnType<typeof readSigned>;
    try {
      read = readSigned(stamp, publicKeys);
    } catch {
      return undefined; // the signature's check says why
    }
    const input = sealInput(stamp);
    const macs = mine.slice(self.length + 1).split('.');
    const issuer = read.claims.iss as string;
    const matches = read.keys.some((k) => {
      const expected = macOf(sealKeys.from(k, issuer), input);
      return macs.some((m) => sameMac(m, expected));
    });
    return matches ? checkStampClaims(read.claims, CLOCK_SKEW_SECONDS, now) : undefined;
  };
  const jtiPrefix = randomBytes(9).toString('base64url');
  let calls = 0;
  const refused = (why: string) => new AppError('unauthenticated', `Invalid internal credential: ${why}`, { code: INTERNAL_CREDENTIAL_REFUSED });
  const verifyToken = (token: string, audience: string | null) => {
    try {
      return verifyInternalTokenWithKey(token, { audience, publicKeys, maxLifetimeSeconds: TOKEN_TTL_SECONDS, clockSkewSeconds: CLOCK_SKEW_SECONDS });
    } catch (err) {
      if (err instanceof TokenError) throw refused(audience === null ? `origin: ${err.message}` : err.message);
      throw err;
    }
  };
  const checkStamp = (stamp: string, seal?: string): EventStampClaims => {
    const now = Math.floor(Date.now() / 1000);
    let claims = stamps.get(stamp);
    if (!claims || claims.exp < now - CLOCK_SKEW_SECONDS) {
      claims = (seal ? unsealed(stamp, seal, now) : undefined) ?? verifyEventStamp(stamp, publicKeys, CLOCK_SKEW_SECONDS, now);
      stamps.set(stamp, claims);
    }
    return claims;
  };
  /** A forwarded credential lives a minute, an event stamp a day, a grant half a year; each is told apart by its audience. */
  const verifyOrigin = (origin: string): { iss: string; org: string; exp: number } => {
    const audience = claimedAudience(origin);
    if (audience !== EVENT_STAMP_AUDIENCE && audience !== GRANT_AUDIENCE) return verifyToken(origin, null).claims;
    try {
      return audience === GRANT_AUDIENCE ? verifyGrant(origin, publicKeys, CLOCK_SKEW_SECONDS) : checkStamp(origin);
    } catch (err) {
      if (err instanceof TokenError) throw refused(`origin: ${err.message}`);
      throw err;
    }
  };
  return {
    self,
    stampEvent(event) {
      return signEventStamp(self, event, privateKey);
    },
    sealStamp(stamp, consumers) {
      const input = sealInput(stamp);
      return consumers
        .filter((c) => c !== self && publicKeys.has(c))
        .map(
          (c) =>
            `${c}:${sealKeys
              .to(c)
              .map((k) => macOf(k, input))
              .join('.')}`,
        )
        .join(',');
    },
    verifyEventStamp: checkStamp,
    signGrant(orgId, service) {
      if (self !== 'gateway') throw new Error(`${self} may not sign grants: only the gateway vouches for an org`);
      return signGrant(orgId, service, privateKey);
    },
    verifyGrant: (grant) => verifyGrant(grant, publicKeys, CLOCK_SKEW_SECONDS),
    sign(ctx, method) {
      const audience = audienceOf(method);
      const now = Math.floor(Date.now() / 1000);
      const org = ctx.orgId ?? '';
      const sub = ctx.userId || (self === 'gateway' ? '' : `service:${self}`);
      const role = ctx.role ?? '';
      const ip = ctx.clientIp ?? '';
      const key = `${audience}\n${org}\n${sub}\n${role}\n${ip}`;
      let token = signed.get(key);
      if (!token || token.exp - now <= REUSE_WHILE_SECONDS_LEFT) {
        const claims: InternalClaims = { iss: self, aud: audience, iat: now, exp: now + TOKEN_TTL_SECONDS, org, sub, role, scp: scopes, ip };
        token = { token: signInternalToken(claims, privateKey), exp: claims.exp };
        signed.set(key, token);
      }
      const jti = `${jtiPrefix}${(calls++).toString(36)}`;
      const exp = now + PROOF_TTL_SECONDS;
      const input = proofInput(method, jti, exp, token.token, ctx.origin ?? '');
      return `${token.token}~${jti}~${exp}~${callKeys
        .to(audience)
        .map((k) => macOf(k, input))
        .join('.')}`;
    },
    verify(credential, operation, requestId = '', origin = '') {
      if (!credential) throw new AppError('unauthenticated', 'This call needs an internal credential', { code: INTERNAL_CREDENTIAL_REFUSED });
      const parts = credential.split('~');
      if (parts.length !== 4) throw refused('malformed credential');
      const [token, jti, expText, macs] = parts;
      const now = Math.floor(Date.now() / 1000);
      let entry = verified.get(token);
      if (!entry || entry.claims.exp < now - CLOCK_SKEW_SECONDS) {
        const { claims, key } = verifyToken(token, self);
        entry = { claims, callKey: callKeys.from(key, claims.iss) };
        verified.set(token, entry);
      }
      const { claims } = entry;
      const exp = Number(expText);
      if (!Number.isInteger(exp) || exp < now - CLOCK_SKEW_SECONDS || exp > now + PROOF_TTL_SECONDS + CLOCK_SKEW_SECONDS)
        throw refused('the call proof has expired');
      if (!JTI.test(jti)) throw refused('malformed call id');
      const expected = macOf(entry.callKey, proofInput(operation, jti, exp, token, origin));
      if (!macs.split('.').some((m) => sameMac(m, expected))) throw refused('the call proof does not match this call');
      if (!seen.add(`${claims.iss}:${jti}`, exp, now)) throw refused('the call was replayed');
      if (!mayCall(claims.iss, operation) || !(claims.scp.includes('*') || claims.scp.includes(operation))) {
        throw new AppError('permission_denied', `${claims.iss} may not call ${operation}`, { code: 'forbidden' });
      }
      // Who vouches for the org: the origin sent beside the token (a chain of calls), else the caller itself.
      let vouchedBy = claims.iss;
      if (origin) {
        let o = origins.get(origin);
        if (!o || o.exp < now - CLOCK_SKEW_SECONDS) {
          o = verifyOrigin(origin);
          origins.set(origin, o);
        }
        if (o.org !== claims.org)
          throw new AppError('permission_denied', `The call's origin vouches for another organization`, { code: 'origin_mismatch' });
        vouchedBy = o.iss;
      }
      if (vouchedBy === claims.iss && ORIGIN_BOUND[claims.iss as InternalPrincipal]?.includes(operation)) {
        throw new AppError('permission_denied', `${claims.iss} may call ${operation} only for an organization another party vouched for`, {
          code: 'origin_required',
        });
      }
      // A service acting on its own has no user; handlers see an empty user id, as before.
      const userId = claims.sub.startsWith('service:') ? '' : claims.sub;
      return { orgId: claims.org, userId, role: claims.role, requestId, clientIp: claims.ip, caller: claims.iss, origin: origin || token };
    },
  };
}

/** The variables every process reads for the internal credential (see README "Trust model"). */
export interface InternalAuthEnv {
  NODE_ENV?: string;
  /** Development and test only: one secret every key is derived from. */
  INTERNAL_AUTH_SEED?: string;
  /** This process's Ed25519 private key: its 32-byte seed, base64. */
  SERVICE_PRIVATE_KEY?: string;
  /**
   * Everyone's public keys: `gateway=<base64>,identity=<base64>,…` (raw 32-byte Ed25519 keys). A name may appear
   * twice while its key is rotated: both keys are accepted until the old one is removed.
   */
  SERVICE_PUBLIC_KEYS?: string;
}

function decode32(value: string, name: string): Buffer {
  const buf = Buffer.from(value.trim(), /^[0-9a-f]{64}$/i.test(value.trim()) ? 'hex' : 'base64');
  if (buf.length !== 32) throw new ConfigError(`Invalid configuration:\n  ${name}: must be a 32-byte Ed25519 key (base64 or hex)`);
  return buf;
}

/**
 * Build this process's internal credential from its environment. Production needs explicit keys (one private
 * key per process, every public key); development and tests may derive them all from INTERNAL_AUTH_SEED.
 */
export function internalAuthFromEnv(self: InternalPrincipal, env: InternalAuthEnv): InternalAuth {
  const bad = (name: string, message: string): never => {
    throw new ConfigError(`Invalid configuration:\n  ${name}: ${message}`);
  };
  if (env.SERVICE_PRIVATE_KEY || env.SERVICE_PUBLIC_KEYS) {
    if (!env.SERVICE_PRIVATE_KEY) bad('SERVICE_PRIVATE_KEY', 'is required when SERVICE_PUBLIC_KEYS is set');
    if (!env.SERVICE_PUBLIC_KEYS) bad('SERVICE_PUBLIC_KEYS', 'is required when SERVICE_PRIVATE_KEY is set');
    const privateKey = privateKeyFromSeed(decode32(env.SERVICE_PRIVATE_KEY!, 'SERVICE_PRIVATE_KEY'));
    const publicKeys = new Map<string, KeyObject[]>();
    for (const entry of env
      .SERVICE_PUBLIC_KEYS!.split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const eq = entry.indexOf('=');
      const name = entry.slice(0, eq).trim();
      if (eq < 1 || !(INTERNAL_PRINCIPALS as readonly string[]).includes(name))
        bad('SERVICE_PUBLIC_KEYS', `unknown entry "${entry.slice(0, 20)}"; expected name=key with a name among ${INTERNAL_PRINCIPALS.join(', ')}`);
      const key = publicKeyFromRaw(decode32(entry.slice(eq + 1), `SERVICE_PUBLIC_KEYS (${name})`));
      publicKeys.set(name, [...(publicKeys.get(name) ?? []), key]);
    }
    const mine = publicKeyFromRaw(rawPublicKey(privateKey));
    if (!publicKeys.get(self)?.some((k) => k.equals(mine))) bad('SERVICE_PUBLIC_KEYS', `has no key for ${self} matching SERVICE_PRIVATE_KEY`);
    return createInternalAuth(self, privateKey, publicKeys);
  }
  if (env.NODE_ENV === 'production') {
    if (env.INTERNAL_AUTH_SEED)
      bad('INTERNAL_AUTH_SEED', 'is for development only; production sets SERVICE_PRIVATE_KEY and SERVICE_PUBLIC_KEYS (npm run keys)');
    bad('SERVICE_PRIVATE_KEY', 'is required in production (with SERVICE_PUBLIC_KEYS; generate them with npm run keys)');
  }
  if (!env.INTERNAL_AUTH_SEED || env.INTERNAL_AUTH_SEED.length < 32) {
    bad(
      'INTERNAL_AUTH_SEED',
      'is required (at least 32 characters) unless SERVICE_PRIVATE_KEY and SERVICE_PUBLIC_KEYS are set; npm start generates one',
    );
  }
  return devInternalAuth(self, env.INTERNAL_AUTH_SEED!);
}

/** Every key derived from one development seed (tests use this to act as the gateway or a service). */
export function devInternalAuth(self: InternalPrincipal, seed: string): InternalAuth {
  const publicKeys = new Map<string, KeyObject[]>();
  for (const name of INTERNAL_PRINCIPALS) publicKeys.set(name, [publicKeyFromRaw(rawPublicKey(privateKeyFromSeed(seedFor(seed, name))))]);
  return createInternalAuth(self, privateKeyFromSeed(seedFor(seed, self)), publicKeys);
}

/** The key material for a deployment: each process's private key and the shared public-key list. */
export function generateInternalKeys(randomSeed: (name: string) => Buffer): { privateKeys: Record<InternalPrincipal, string>; publicKeys: string } {
  const privateKeys = {} as Record<InternalPrincipal, string>;
  const pubs: string[] = [];
  for (const name of INTERNAL_PRINCIPALS) {
    const seed = randomSeed(name);
    privateKeys[name] = seed.toString('base64');
    pubs.push(`${name}=${rawPublicKey(privateKeyFromSeed(seed)).toString('base64')}`);
  }
  return { privateKeys, publicKeys: pubs.join(',') };
}
