import type { Logger } from '@crm/logger';
import type { Redis } from '../redis';

/** The commands @socket.io/redis-adapter sends without awaiting their promise: publishing, and unsubscribing as it closes. */
const PUBLISHER_FIRE_AND_FORGET = new Set<string | symbol>(['publish', 'sPublish']);
const SUBSCRIBER_FIRE_AND_FORGET = new Set<string | symbol>(['unsubscribe', 'pUnsubscribe', 'sUnsubscribe']);

/**
 * The publishing client as the socket.io adapter should see it: the adapter calls `publish` and drops the promise,
 * so a command that fails (a timeout while the event loop is saturated, Redis away with the offline queue off) would
 * be an unhandled rejection, and Node ends the process on one. Here such a failure is logged instead: one emit is
 * lost for the sockets on other instances, as it would be with Redis away, and the gateway keeps serving.
 */
export function adapterPublisher(client: Redis, log: Logger): Redis {
  let failures = 0;
  let loggedAt = 0;
  return withDroppedPromises(client, PUBLISHER_FIRE_AND_FORGET, (err) => {
    failures += 1;
    const now = Date.now();
    if (now - loggedAt < 10_000) return; // at most one line per 10 s during an outage
    log.warn({ err, failures }, 'socket.io adapter publish failed; the emit did not reach other instances');
    loggedAt = now;
    failures = 0;
  });
}

/**
 * The subscribing client as the adapter should see it: as the gateway stops, the adapter unsubscribes and drops the
 * promises. With Redis away those fail when the connection is dropped, and Node would end the stopping gateway on the
 * first (exit 1, the rest of its shutdown skipped). Nothing is left to unsubscribe from once the connection is gone.
 */
export function adapterSubscriber(client: Redis, log: Logger): Redis {
  return withDroppedPromises(client, SUBSCRIBER_FIRE_AND_FORGET, (err) =>
    log.debug({ err }, 'socket.io adapter unsubscribe failed; the connection is closing anyway'),
  );
}

/**
 * A Proxy rather than a subclass or a copy: the adapter recognises the client by its methods, and node-redis keeps
 * its state in private fields, so every method is called on the real client (bound), never on the proxy. The promise
 * of each of `dropped` goes back to the caller with a handler already attached.
 */
function withDroppedPromises(client: Redis, dropped: ReadonlySet<string | symbol>, onFailure: (err: unknown) => void): Redis {
  return new Proxy(client, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      if (!dropped.has(prop)) return (value as (...a: unknown[]) => unknown).bind(target);
      return (...args: unknown[]) => {
        const sent = (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        sent.catch(onFailure);
        return sent;
      };
    },
  });
}
