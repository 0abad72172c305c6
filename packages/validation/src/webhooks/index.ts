import { invalid } from '@crm/grpc-kit';

// The webhooks service's contract rules the gateway's schemas are built from too. The event names, the URL's
// address policy and the secret's format stay in the webhooks service (they need its catalogue and resolver).

export const MAX_URL_LENGTH = 2048;
export const URL_TOO_LONG = `must be at most ${MAX_URL_LENGTH} characters`;

/** Most events one endpoint may subscribe to (there are fewer public events than this). */
export const MAX_EVENTS = 50;
export const TOO_MANY_EVENTS = `must list at most ${MAX_EVENTS} events`;
export const NO_EVENTS = 'must list at least one event';

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

/** The event list's count: at least one, at most MAX_EVENTS (duplicates count; they are dropped after). */
export function eventCount(events: readonly string[] | undefined): void {
  const n = events?.length ?? 0;
  if (n === 0) throw invalid('events', NO_EVENTS);
  if (n > MAX_EVENTS) throw invalid('events', TOO_MANY_EVENTS);
}
