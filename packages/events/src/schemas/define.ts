import type { z } from 'zod';
import type { ProducerService } from '../broker-services';

/** One version of one event type: its data on the bus and, for a public event, what a webhook receives. */
export interface EventDefinition<T extends string = string, D extends z.ZodType = z.ZodType, W extends z.ZodType = z.ZodType> {
  type: T;
  version: number;
  /** For the event catalogue (the webhook documentation). */
  description: string;
  /**
   * The services whose outbox writes it. A consumer accepts the event only from their broker users (publishers.ts):
   * another service's user publishing it is refused, so a compromised service cannot speak for the others.
   */
  producers: readonly ProducerService[];
  /** The event's `data` as its producers write it and its consumers parse it. */
  data: D;
  /** Public events only: the webhook payload's `data` (the public resource shapes) and how it is made from the event's. */
  webhook?: {
    data: W;
    // Method syntax: a registry holds definitions of every data type side by side.
    from(data: z.output<D>): z.output<W>;
  };
  /**
   * Narrower routing keys (`<type>.<word>`) some events of this type are published under instead of the type, each
   * with the test that picks it, judged on the data as its producer wrote it (the first that holds wins). A queue
   * bound to the type gets them too (EventConsumer binds them for it), unless its consumer excludes one: how a
   * consumer keeps away events it would only drop.
   */
  routingKeys?: Readonly<Record<string, (data: unknown) => boolean>>;
}

interface Definition<T extends string, D extends z.ZodType, W extends z.ZodType> {
  type: T;
  version: number;
  description: string;
  producers: readonly ProducerService[];
  data: D;
  /** 'same': the webhook gets the event's data as it is (it holds no internal shape). */
  webhook?: 'same' | { data: W; from(data: z.output<D>): z.output<W> };
  routingKeys?: Readonly<Record<string, (data: z.input<D>) => boolean>>;
}

export function defineEvent<T extends string, D extends z.ZodType, W extends z.ZodType = D>(d: Definition<T, D, W>): EventDefinition<T, D, W> {
  const webhook = d.webhook === 'same' ? { data: d.data as unknown as W, from: (x: z.output<D>) => x as unknown as z.output<W> } : d.webhook;
  for (const key of Object.keys(d.routingKeys ?? {})) {
    // Exactly one word more than the type, so `<type>.*` and `<type>.#` bindings catch it as well.
    const word = key.startsWith(`${d.type}.`) ? key.slice(d.type.length + 1) : '';
    if (!/^[a-z0-9_]+$/.test(word)) throw new Error(`${d.type}: routing key "${key}" must be "${d.type}.<word>"`);
  }
  const routingKeys = d.routingKeys as EventDefinition['routingKeys'];
  if (d.producers.length === 0) throw new Error(`${d.type}: no producers`);
  return {
    type: d.type,
    version: d.version,
    description: d.description,
    producers: d.producers,
    data: d.data,
    ...(webhook ? { webhook } : {}),
    ...(routingKeys ? { routingKeys } : {}),
  };
}
