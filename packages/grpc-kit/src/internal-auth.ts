import type { KeyObject } from 'node:crypto';
import { ConfigError } from '@crm/config';
import { CallContext } from './context';
import { AppError } from './errors';
import {
  InternalClaims,
  privateKeyFromSeed,
  publicKeyFromRaw,
  rawPublicKey,
  seedFor,
  signInternalToken,
  TokenError,
  verifyInternalToken,
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
  ],
  messaging: [
    'identity.v1.IdentityService/GetUser',
    'identity.v1.IdentityService/GetTeam',
    // Resolving `@email` mentions in private notes.
    'identity.v1.IdentityService/ListUsers',
    'crm.v1.CrmService/UpsertChatnetContact',
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
    'messaging.v1.MessagingService/SendMessage',
    // The assign_round_robin action.
    'messaging.v1.MessagingService/AssignRoundRobin',
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
const CLOCK_SKEW_SECONDS = 5;
/** A signed token is reused for calls with the same caller while more than this much of its life is left. */
const REUSE_WHILE_SECONDS_LEFT = TOKEN_TTL_SECONDS / 2;
/** Bound on each cache (signed tokens, verified tokens); past it the oldest entries go. */
const CACHE_ENTRIES = 10_000;

/**
 * Ed25519 costs about 40 µs to sign and 120 µs to verify on a small core: per call that would be a real share of a
 * request. A token carries only the caller (no request id), so the same caller's token is reused for half its life
 * and a verified token is remembered until it expires; both caches are bounded.
 */
class BoundedCache<V> {
  private readonly map = new Map<string, V>();
  get(key: string): V | undefined {
    return this.map.get(key);
  }
  set(key: string, value: V): void {
    if (this.map.size >= CACHE_ENTRIES) {
      // Map iterates in insertion order: drop the oldest tenth at once rather than one per insert.
      let drop = CACHE_ENTRIES / 10;
      for (const k of this.map.keys()) {
        this.map.delete(k);
        if (--drop === 0) break;
      }
    }
    this.map.set(key, value);
  }
}

export interface InternalAuth {
  readonly self: InternalPrincipal;
  /**
   * The token for a call to `audience`, carrying `ctx` (a service acting on its own has no user: `service:<self>`).
   * The request id is not in it: it travels beside the token (`x-request-id`) and only labels logs.
   */
  sign(ctx: Partial<CallContext>, audience: string): string;
  /**
   * The caller's context from a token, or AppError `unauthenticated` (no, bad, expired, foreign token) or
   * `permission_denied` (a service calling outside its policy). `operation` is `package.Service/Method`.
   */
  verify(token: string | undefined, operation: string, requestId?: string): CallContext;
}

export function createInternalAuth(self: InternalPrincipal, privateKey: KeyObject, publicKeys: ReadonlyMap<string, readonly KeyObject[]>): InternalAuth {
  const scopes = self === 'gateway' ? ['*'] : [...SERVICE_CALL_POLICY[self]];
  const signed = new BoundedCache<{ token: string; exp: number }>();
  const verified = new BoundedCache<InternalClaims>();
  return {
    self,
    sign(ctx, audience) {
      const now = Math.floor(Date.now() / 1000);
      const org = ctx.orgId ?? '';
      const sub = ctx.userId || (self === 'gateway' ? '' : `service:${self}`);
      const role = ctx.role ?? '';
      const ip = ctx.clientIp ?? '';
      const key = `${audience}\n${org}\n${sub}\n${role}\n${ip}`;
      const reuse = signed.get(key);
      if (reuse && reuse.exp - now > REUSE_WHILE_SECONDS_LEFT) return reuse.token;
      const claims: InternalClaims = { iss: self, aud: audience, iat: now, exp: now + TOKEN_TTL_SECONDS, org, sub, role, scp: scopes, ip };
      const token = signInternalToken(claims, privateKey);
      signed.set(key, { token, exp: claims.exp });
      return token;
    },
    verify(token, operation, requestId = '') {
      if (!token) throw new AppError('unauthenticated', 'This call needs an internal credential', { code: INTERNAL_CREDENTIAL_REFUSED });
      let claims = verified.get(token);
      if (!claims || claims.exp < Math.floor(Date.now() / 1000) - CLOCK_SKEW_SECONDS) {
        try {
          claims = verifyInternalToken(token, { audience: self, publicKeys, maxLifetimeSeconds: TOKEN_TTL_SECONDS, clockSkewSeconds: CLOCK_SKEW_SECONDS });
        } catch (err) {
          if (err instanceof TokenError) throw new AppError('unauthenticated', `Invalid internal credential: ${err.message}`, { code: INTERNAL_CREDENTIAL_REFUSED });
          throw err;
        }
        verified.set(token, claims);
      }
      if (!mayCall(claims.iss, operation) || !(claims.scp.includes('*') || claims.scp.includes(operation))) {
        throw new AppError('permission_denied', `${claims.iss} may not call ${operation}`, { code: 'forbidden' });
      }
      // A service acting on its own has no user; handlers see an empty user id, as before.
      const userId = claims.sub.startsWith('service:') ? '' : claims.sub;
      return { orgId: claims.org, userId, role: claims.role, requestId, clientIp: claims.ip, caller: claims.iss };
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
    for (const entry of env.SERVICE_PUBLIC_KEYS!.split(',').map((s) => s.trim()).filter(Boolean)) {
      const eq = entry.indexOf('=');
      const name = entry.slice(0, eq).trim();
      if (eq < 1 || !(INTERNAL_PRINCIPALS as readonly string[]).includes(name)) bad('SERVICE_PUBLIC_KEYS', `unknown entry "${entry.slice(0, 20)}"; expected name=key with a name among ${INTERNAL_PRINCIPALS.join(', ')}`);
      const key = publicKeyFromRaw(decode32(entry.slice(eq + 1), `SERVICE_PUBLIC_KEYS (${name})`));
      publicKeys.set(name, [...(publicKeys.get(name) ?? []), key]);
    }
    const mine = publicKeyFromRaw(rawPublicKey(privateKey));
    if (!publicKeys.get(self)?.some((k) => k.equals(mine))) bad('SERVICE_PUBLIC_KEYS', `has no key for ${self} matching SERVICE_PRIVATE_KEY`);
    return createInternalAuth(self, privateKey, publicKeys);
  }
  if (env.NODE_ENV === 'production') {
    if (env.INTERNAL_AUTH_SEED) bad('INTERNAL_AUTH_SEED', 'is for development only; production sets SERVICE_PRIVATE_KEY and SERVICE_PUBLIC_KEYS (npm run keys)');
    bad('SERVICE_PRIVATE_KEY', 'is required in production (with SERVICE_PUBLIC_KEYS; generate them with npm run keys)');
  }
  if (!env.INTERNAL_AUTH_SEED || env.INTERNAL_AUTH_SEED.length < 32) {
    bad('INTERNAL_AUTH_SEED', 'is required (at least 32 characters) unless SERVICE_PRIVATE_KEY and SERVICE_PUBLIC_KEYS are set; npm start generates one');
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
