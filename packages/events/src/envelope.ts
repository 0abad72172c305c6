import { isUuid } from '@crm/db';

/** What travels on the bus. `id` is the de-duplication key: a re-published event keeps it. */
export interface EventEnvelope<T = unknown> {
  id: string;
  type: string;
  orgId: string;
  occurredAt: string;
  /** The version of the type's schema `data` follows (schemas/index.ts); absent on messages from before versions: 1. */
  version?: number;
  data: T;
}

export class InvalidEnvelopeError extends Error {
  override readonly name = 'InvalidEnvelopeError';
}

/**
 * Decode a message body. A body that is not an envelope can never succeed however often it is retried,
 * so the consumer sends it straight to the dead-letter queue instead of burning attempts on it.
 */
export function parseEnvelope(body: Buffer): EventEnvelope {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw new InvalidEnvelopeError('message body is not JSON');
  }
  if (typeof value !== 'object' || value === null) throw new InvalidEnvelopeError('message body is not an object');
  const e = value as Record<string, unknown>;
  for (const field of ['id', 'type', 'orgId', 'occurredAt'] as const) {
    if (typeof e[field] !== 'string' || e[field] === '') throw new InvalidEnvelopeError(`envelope field "${field}" is missing`);
  }
  if (!isUuid(e.id as string)) throw new InvalidEnvelopeError('envelope id is not a UUID');
  if (e.version !== undefined && !(Number.isInteger(e.version) && (e.version as number) >= 1))
    throw new InvalidEnvelopeError('envelope version is not a positive integer');
  if (!('data' in e)) throw new InvalidEnvelopeError('envelope field "data" is missing');
  return e as unknown as EventEnvelope;
}
