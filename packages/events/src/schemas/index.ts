import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { appointmentEvents } from './appointments';
import { chatnetEvents } from './chatnet';
import { contactEvents } from './contacts';
import { conversationEvents } from './conversations';
import type { EventDefinition } from './define';
import type { EventEnvelope } from '../envelope';
import { platformEvents } from './platform';
import { taskEvents } from './tasks';
import { userEvents } from './users';

export { EventContact, PublicContact, SCORE_ONLY_CONTACT_UPDATE, toPublicContact } from './contacts';
export type { EventDefinition } from './define';

/** Every event type and version the system publishes, family by family. */
const DEFINITIONS = [
  ...contactEvents,
  ...appointmentEvents,
  ...taskEvents,
  ...conversationEvents,
  ...chatnetEvents,
  ...platformEvents,
  ...userEvents,
];

type Definitions = (typeof DEFINITIONS)[number];
export type EventType = Definitions['type'];
/** The data a producer writes for `T` (today every type has version 1 only). */
export type EventData<T extends EventType> = z.input<Extract<Definitions, { type: T }>['data']>;
/** The data of `T` as a consumer with `parseData` gets it: what its schema parsed. */
export type ParsedEventData<T extends EventType> = z.output<Extract<Definitions, { type: T }>['data']>;
/** An event of one of the types `T` with its data parsed; a union per type, so `switch (event.type)` narrows `data`. */
export type ParsedEvent<T extends EventType = EventType> = T extends EventType
  ? Omit<EventEnvelope, 'type' | 'data'> & { type: T; data: ParsedEventData<T> }
  : never;

/**
 * Whether an event is of one of `types`, and then its data typed by that type's schema. Only for events a consumer
 * with `parseData` handed over: its parse is what makes the type true (an event that did not fit never got here).
 */
export function isEventOf<T extends EventType>(event: EventEnvelope, ...types: T[]): event is ParsedEvent<T> {
  return (types as string[]).includes(event.type);
}

/** `eventSchemas[type][version]`: the one schema of each event. */
export const eventSchemas: Readonly<Record<string, Readonly<Record<number, EventDefinition>>>> = (() => {
  const out: Record<string, Record<number, EventDefinition>> = {};
  for (const d of DEFINITIONS as EventDefinition[]) {
    const versions = (out[d.type] ??= {});
    if (versions[d.version]) throw new Error(`event ${d.type} v${d.version} is defined twice`);
    versions[d.version] = d;
  }
  return out;
})();

export const isKnownEventType = (type: string): type is EventType => Object.hasOwn(eventSchemas, type);

/** The version a producer writes when it names none: the newest defined (the catalogue is fixed: worked out once a type). */
const currentVersions = new Map<string, number>();
export function currentVersion(type: string): number {
  let version = currentVersions.get(type);
  if (version === undefined) {
    const versions = Object.keys(eventSchemas[type] ?? {}).map(Number);
    version = versions.length ? Math.max(...versions) : 1;
    if (isKnownEventType(type)) currentVersions.set(type, version);
  }
  return version;
}

/** Every definition, type by type, oldest version first (the catalogue's order). */
export function eventDefinitions(): EventDefinition[] {
  return Object.values(eventSchemas).flatMap((versions) => Object.values(versions).sort((a, b) => a.version - b.version));
}

/**
 * The services whose outbox writes `type` (every version's, together); undefined for a type the catalogue lacks. Asked
 * for every stamped delivery and every publisher check: worked out once a type (the catalogue is fixed), frozen.
 */
const producerLists = new Map<string, readonly string[]>();
export function producersOf(type: string): readonly string[] | undefined {
  const versions = eventSchemas[type];
  if (!versions) return undefined;
  let producers = producerLists.get(type);
  if (!producers) {
    producers = Object.freeze([...new Set(Object.values(versions).flatMap((d) => d.producers))]);
    producerLists.set(type, producers);
  }
  return producers;
}

/** Public event types (a webhook can subscribe to them) in catalogue order. */
export function publicEventTypes(): EventType[] {
  return [
    ...new Set(
      eventDefinitions()
        .filter((d) => d.webhook)
        .map((d) => d.type as EventType),
    ),
  ];
}

/**
 * The routing key an event is published under: its type, or the first of its definition's narrower routing keys
 * whose test holds for the data. Data that does not let a test judge it (an older producer's) keeps the type.
 */
export function routingKeyOf(type: string, version: number, data: () => unknown): string {
  const keys = Object.entries(eventSchemas[type]?.[version]?.routingKeys ?? {});
  if (keys.length === 0) return type;
  try {
    const value = data();
    return keys.find(([, holds]) => holds(value))?.[0] ?? type;
  } catch {
    return type;
  }
}

/** Every narrower routing key the catalogue declares, with the type it narrows. */
export function narrowRoutingKeys(): { type: string; key: string }[] {
  return eventDefinitions().flatMap((d) => Object.keys(d.routingKeys ?? {}).map((key) => ({ type: d.type, key })));
}

/** An event's data does not match its schema (or its version is unknown): it can never be applied as it is. */
export class InvalidEventDataError extends Error {
  override readonly name = 'InvalidEventDataError';
}

function definition(type: string, version: number): EventDefinition | undefined {
  const versions = eventSchemas[type];
  if (!versions) return undefined;
  const d = versions[version];
  if (!d) throw new InvalidEventDataError(`${type} has no version ${version} (known: ${Object.keys(versions).join(', ')})`);
  return d;
}

/** `path: message` of the first few issues, e.g. `contact.fullName: Invalid input: expected string, received undefined`. */
function describe(error: z.ZodError): string {
  const issues = error.issues.slice(0, 5).map((i) => `${i.path.length ? i.path.join('.') : '(data)'}: ${i.message}`);
  return issues.join('; ') + (error.issues.length > 5 ? `; and ${error.issues.length - 5} more` : '');
}

/**
 * A consumer's view of an event's data: parsed by its type's schema (fields the schema does not list are
 * dropped). Types without a schema pass as they are; a registered type whose data does not fit, or an unknown
 * version of one, throws InvalidEventDataError naming the fields.
 */
export function parseEventData(type: string, version: number, data: unknown): unknown {
  const d = definition(type, version);
  if (!d) return data;
  const result = d.data.safeParse(data);
  if (!result.success) throw new InvalidEventDataError(`${type} v${version} data does not match its schema: ${describe(result.error)}`);
  return result.data;
}

/**
 * The producer's check, stricter than a consumer's: the data must fit its schema and hold nothing the schema
 * does not describe (compared as it will be stored, i.e. after JSON), so the schema stays the whole contract.
 */
export function checkProducedData(type: string, version: number, data: unknown): void {
  const d = definition(type, version);
  if (!d) return;
  const stored: unknown = data === undefined ? null : JSON.parse(JSON.stringify(data));
  const result = d.data.safeParse(stored);
  if (!result.success) throw new InvalidEventDataError(`${type} v${version} data does not match its schema: ${describe(result.error)}`);
  if (!isDeepStrictEqual(result.data, stored)) {
    throw new InvalidEventDataError(
      `${type} v${version} data has fields its schema does not describe: ${extraFields(stored, result.data).join(', ')}`,
    );
  }
}

/** Paths present in `given` but not in `kept` (what parsing dropped). */
function extraFields(given: unknown, kept: unknown, path = ''): string[] {
  if (Array.isArray(given) && Array.isArray(kept)) return given.flatMap((g, i) => extraFields(g, kept[i], `${path}[${i}]`));
  if (!isObject(given) || !isObject(kept)) return [];
  return Object.keys(given).flatMap((k) => {
    const at = path ? `${path}.${k}` : k;
    return k in kept ? extraFields(given[k], kept[k], at) : [at];
  });
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What a webhook subscriber gets as `data` for a public event: the public resource shapes (a contact as the public
 * REST API shows it), parsed from the event's data. Throws InvalidEventDataError for data that does not fit and
 * for a type that is not public.
 */
export function webhookData(type: string, version: number, data: unknown): unknown {
  const d = definition(type, version);
  if (!d?.webhook) throw new InvalidEventDataError(`${type} is not a public event`);
  return d.webhook.data.parse(d.webhook.from(parseEventData(type, version, data)));
}
