import { BROKER_SERVICES } from './broker-services';
import { producersOf } from './schemas';

/** Names the reason on the dead-letter copy of a delivery whose publisher was refused. */
export const REFUSED_REASON_HEADER = 'x-refused-reason';

/** The user a connection to `url` signs in as, decided as amqplib does: a URL without credentials is guest. */
export function amqpUser(url: string): string {
  let parts: URL;
  try {
    parts = new URL(url);
  } catch {
    return 'guest';
  }
  if (parts.username === '' && parts.password === '') return 'guest';
  return decodeURIComponent(parts.username);
}

/** The broker user a service connects as. */
export function brokerUser(service: string, userPrefix: string): string {
  return `${userPrefix}${service}`;
}

/**
 * Whether `user` is no service's own broker user (guest under `npm start` and the tests): then every service shares it,
 * and a publisher check can tell none of them apart.
 */
export function isSharedBrokerUser(user: string, userPrefix: string): boolean {
  return !BROKER_SERVICES.some((s) => brokerUser(s, userPrefix) === user);
}

export interface PublisherCheck {
  /** The consumer's own connection user (amqpUser of its URL). */
  ownUser: string;
  /** AMQP_USER_PREFIX: the producers' broker users are this plus their service names. */
  userPrefix: string;
}

/** What a delivery says about its publisher and its type. */
export interface Delivered {
  /** The envelope's type: what the handler acts on. */
  type: string;
  routingKey: string;
  /** The message's user_id property. */
  userId: unknown;
}

/**
 * Why a delivery must not be handled, or undefined when its publisher may publish its type. RabbitMQ refuses a publish
 * whose user_id is not its connection's user, so a user_id names the publisher truly; a publish without one is accepted
 * by the broker, so it proves nothing and is refused here. Accepted besides the type's producers: the consumer's own
 * user, i.e. this service itself (its copies coming back from its retry queues) or, where every service shares one user
 * (npm start's guest), anyone; nothing can be told apart there. A producer's event must also travel under its own
 * routing key (the type, or a narrower key of it), or a producer of one type could reach the queues of another.
 */
export function publisherRefusal(d: Delivered, check: PublisherCheck): string | undefined {
  const publisher = typeof d.userId === 'string' && d.userId !== '' ? d.userId : undefined;
  if (publisher === undefined) return `a message without user_id has no verified publisher; refused as ${d.type}`;
  if (publisher === check.ownUser) return undefined;
  const producers = (producersOf(d.type) ?? []).map((s) => brokerUser(s, check.userPrefix));
  if (!producers.includes(publisher)) {
    return `publisher ${publisher} is not a producer of ${d.type}${producers.length ? ` (producers: ${producers.join(', ')})` : ' (a type the catalogue lacks)'}`;
  }
  if (d.routingKey !== d.type && !d.routingKey.startsWith(`${d.type}.`)) {
    return `publisher ${publisher} sent ${d.type} under the routing key ${d.routingKey}`;
  }
  return undefined;
}

/** A delivery whose publisher may not publish its type: it is dead-lettered with the reason, never handled. */
export class RefusedPublisherError extends Error {
  override readonly name = 'RefusedPublisherError';
}
