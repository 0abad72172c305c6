import type { EventEnvelope } from './envelope';
import { producersOf } from './schemas';

/**
 * The AMQP header carrying an event's stamp: its producer's signature over the event's org, id and type, made by
 * @crm/grpc-kit's InternalAuth (event-stamp.ts there) when the event is published. A consumer acting on the event
 * passes it as its calls' origin (eventOrigin), so the services it calls know the org is the event's.
 */
export const EVENT_STAMP_HEADER = 'x-crm-event-stamp';

/**
 * The AMQP header carrying a stamp's seal: an HMAC of the stamp for each service that checks it, under the key the
 * producer shares with that service (InternalAuth.sealStamp). A consumer checks the stamp by its seal (~16 µs) instead of
 * its signature (~120 µs: at 200 inbound messages a second that was 8% of messaging's CPU); the signature stays for
 * the services the stamp is later passed to as a call's origin. A missing or wrong seal only costs the signature's check.
 */
export const EVENT_STAMP_SEAL_HEADER = 'x-crm-event-stamp-seal';

/**
 * The types that carry a stamp, each with the services (InternalAuth principals) that consume it with `stamps`: its
 * producer seals the stamp for them (EVENT_STAMP_SEAL_HEADER); a consumer left out still checks the stamp, by its
 * signature. A type is here when a consumer acts on it with calls bound to the event's org (messaging's inbound
 * consumer asks crm for a thread's contact under the connector's stamp; the README's trust model lists the bound
 * methods). No consumer reads the stamp of any other type, and a stamp costs a signature per published event (~50 µs
 * on this machine's cores): at 200 messages a second with every event stamped that was a few percent of the path's
 * CPU (bench/realtime) for nothing. A type joins when a consumer of it starts passing eventOrigin to a bound method; a
 * consumer given `stamps` for any other type is refused at construction.
 */
export const STAMP_CHECKERS: Readonly<Record<string, readonly string[]>> = { 'chatnet.inbound': ['messaging'] };

/** The types that carry a stamp (STAMP_CHECKERS' types). */
export const STAMPED_TYPES: ReadonlySet<string> = new Set(Object.keys(STAMP_CHECKERS));

/** What the outbox relay and the direct publisher stamp with (this process's InternalAuth). */
export interface EventStamper {
  stampEvent(event: { id: string; type: string; orgId: string }): string;
  /** The stamp's seal for the services that check it (STAMP_CHECKERS); a stamper without it sends no seal. */
  sealStamp?(stamp: string, consumers: readonly string[]): string;
}

/** What a consumer checks stamps with (this process's InternalAuth): the signature and lifetime, or a throw. */
export interface EventStampVerifier {
  /** With the delivered seal (EVENT_STAMP_SEAL_HEADER), checked by it when it has this process's entry. */
  verifyEventStamp(stamp: string, seal?: string): { iss: string; org: string; eid: string; typ: string };
}

/**
 * The broker service of a signing process: the same names but for the connector, whose process signs as `connector`
 * (internal-auth's principals) and whose broker user and catalogue name is `chatnet-connector`.
 */
const brokerServiceOf = (iss: string) => (iss === 'connector' ? 'chatnet-connector' : iss);

/**
 * Why a delivered stamp does not vouch for its event, or undefined when it does: it verifies (its issuer's key, within
 * its day), it was made for this very event (org, id, type), and its issuer is one of the type's catalogue producers.
 */
export function stampRefusal(event: EventEnvelope, stamp: unknown, verifier: EventStampVerifier, seal?: unknown): string | undefined {
  if (typeof stamp !== 'string' || stamp === '') return 'the event stamp is not a string';
  let claims: ReturnType<EventStampVerifier['verifyEventStamp']>;
  try {
    claims = verifier.verifyEventStamp(stamp, typeof seal === 'string' && seal !== '' ? seal : undefined);
  } catch (err) {
    return `the event stamp does not verify: ${(err as Error).message}`;
  }
  if (claims.org !== event.orgId || claims.eid !== event.id || claims.typ !== event.type) return 'the event stamp was made for another event';
  const producers: readonly string[] = producersOf(event.type) ?? [];
  if (!producers.includes(brokerServiceOf(claims.iss))) return `the event stamp's issuer ${claims.iss} is not a producer of ${event.type}`;
  return undefined;
}

/** The verified stamp of each event being handled (kept off the envelope, like its trace, so it is never serialised). */
const origins = new WeakMap<EventEnvelope, string>();

export function setEventOrigin(event: EventEnvelope, stamp: string): void {
  origins.set(event, stamp);
}

/**
 * The verified stamp of a consumed event, to pass as the origin of calls made for it (`{ orgId: event.orgId, origin }`).
 * Undefined for a consumer not given `stamps` (EventConsumerOptions) or an event that came without one: calls to
 * origin-bound methods are then refused (origin_required), never made for an org nobody vouched for.
 */
export function eventOrigin(event: EventEnvelope): string | undefined {
  return origins.get(event);
}
