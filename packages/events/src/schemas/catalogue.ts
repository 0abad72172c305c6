import { z } from 'zod';
import { EVENT_EXAMPLES } from './examples';
import { eventDefinitions, webhookData } from './index';

/** One event type and version as documented: for a public event, the JSON Schema of what a webhook receives as `data`. */
export interface CatalogueEntry {
  type: string;
  version: number;
  description: string;
  /** The services that publish it (consumers refuse it from any other service's broker user). */
  producers: string[];
  /** A webhook can subscribe to it. */
  public: boolean;
  /** JSON Schema (draft 2020-12, as OpenAPI 3.1 uses) of `data`: the webhook's for a public event, the bus's otherwise. */
  schema: Record<string, unknown>;
  /** An example of `data` (as a webhook receives it, for a public event). */
  example: unknown;
}

/** JSON Schema of a zod schema, without `$schema` (it is embedded in other documents). */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'output' }) as Record<string, unknown>;
  return rest;
}

/** The event catalogue, generated from the schemas (the gateway serves the public part in its OpenAPI `webhooks`). */
export function eventCatalogue(): CatalogueEntry[] {
  return eventDefinitions().map((d) => ({
    type: d.type,
    version: d.version,
    description: d.description,
    producers: [...d.producers],
    public: d.webhook !== undefined,
    schema: jsonSchemaOf(d.webhook?.data ?? d.data),
    example: d.webhook ? webhookData(d.type, d.version, EVENT_EXAMPLES[d.type]) : EVENT_EXAMPLES[d.type],
  }));
}
