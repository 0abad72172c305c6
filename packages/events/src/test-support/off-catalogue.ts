import type { NewEvent } from '../outbox';

/** An event as the outbox takes it at run time: any type, any data. */
export interface OffCatalogueEvent {
  type: string;
  orgId: string;
  data: unknown;
  id?: string;
  version?: number;
  occurredAt?: string;
  traceparent?: string;
}

/**
 * An event of a type outside the catalogue (widget.*, ping.*), or with a type no catalogue could have ('', 256
 * bytes). The transport's tests use such types: the outbox, relay and consumers carry any type, and check data only
 * against a schema the catalogue has (schemas/index.ts, checkProducedData). NewEvent admits only the catalogue's
 * types, which is what a producer should meet; this is the one place the package's own tests step around it.
 */
export const offCatalogue = (e: OffCatalogueEvent): NewEvent => e as NewEvent;
