import type { KeyObject } from 'node:crypto';
import { checkLifetime, signToken, TokenError, verifySigned } from './internal-token';

/**
 * An event stamp: the producing service's signature over an event's org, id and type, made when the event is
 * published (the outbox relay, the connector's direct publisher) and carried beside it in an AMQP header. A consumer
 * acting on the event passes it as its calls' origin (CallContext.origin), so the service it calls knows the org was
 * the event's, vouched for by its producer, not one the consumer chose (ORIGIN_BOUND in internal-auth.ts).
 */
export interface EventStampClaims {
  /** The producing process ('connector', 'messaging', ...): the key that signed. */
  iss: string;
  aud: typeof EVENT_STAMP_AUDIENCE;
  iat: number;
  exp: number;
  org: string;
  /** The event's id (the envelope's, kept by every redelivery and retry copy). */
  eid: string;
  /** The event's type: consumers check `iss` is one of its catalogue producers. */
  typ: string;
}

/** The audience of an event stamp: no service, so it can never pass as a call's own credential. */
export const EVENT_STAMP_AUDIENCE = 'event';

/**
 * How long a stamp vouches for its event's org: a day. It must outlive the event's whole journey, not one call: a
 * consumer's retries with backoff (messaging's run about an hour), a consumer that was down overnight catching up on
 * its queue, a contact link messaging retries later under the stamp of the message that asked for it. Longer is not
 * needed and would only widen what a stolen stamp is good for (calls for that one org). An event handled after it
 * expired is still handled; only its calls to origin-bound methods are refused. Servers refuse a longer lifetime
 * whatever the stamp says.
 */
export const EVENT_STAMP_TTL_SECONDS = 24 * 3600;

/** The event a stamp is made for (an envelope's fields). */
export interface StampedEvent {
  id: string;
  type: string;
  orgId: string;
}

export function signEventStamp(iss: string, e: StampedEvent, key: KeyObject, now = Math.floor(Date.now() / 1000)): string {
  const claims: EventStampClaims = {
    iss,
    aud: EVENT_STAMP_AUDIENCE,
    iat: now,
    exp: now + EVENT_STAMP_TTL_SECONDS,
    org: e.orgId,
    eid: e.id,
    typ: e.type,
  };
  return signToken(claims, key);
}

/** The claims of a stamp its issuer's key signed, still within its lifetime; TokenError otherwise. */
export function verifyEventStamp(
  stamp: string,
  publicKeys: ReadonlyMap<string, readonly KeyObject[]>,
  clockSkewSeconds: number,
  now = Math.floor(Date.now() / 1000),
): EventStampClaims {
  return checkStampClaims(verifySigned(stamp, publicKeys).claims, clockSkewSeconds, now);
}

/** What makes authentic claims a stamp's: its audience, its lifetime (a day at most) and the event it names. */
export function checkStampClaims(claims: Record<string, unknown>, clockSkewSeconds: number, now: number): EventStampClaims {
  if (claims.aud !== EVENT_STAMP_AUDIENCE) throw new TokenError('not an event stamp');
  checkLifetime(claims, EVENT_STAMP_TTL_SECONDS, clockSkewSeconds, now);
  for (const k of ['org', 'eid', 'typ'] as const) if (typeof claims[k] !== 'string' || claims[k] === '') throw new TokenError(`bad ${k}`);
  return claims as unknown as EventStampClaims;
}
