import { EVENT_STAMP_HEADER, producersOf } from '@crm/events';
import type { InternalPrincipal } from '@crm/grpc-kit';
import { testAuth } from '@crm/testing';

/**
 * The headers a test's publish carries to pass as its type's producer: the producer's event stamp under the tests'
 * keys (what its outbox relay or direct publisher signs), so a consumer that acts on the event for its org can vouch
 * for it at the services it calls. None for a type the catalogue lacks.
 */
export function producerStampHeaders(type: string, orgId: string, id: string): Record<string, string> {
  const producer = producersOf(type)?.[0];
  if (!producer) return {};
  const principal = (producer === 'chatnet-connector' ? 'connector' : producer) as InternalPrincipal;
  return { [EVENT_STAMP_HEADER]: testAuth(principal).stampEvent({ id, type, orgId }) };
}
