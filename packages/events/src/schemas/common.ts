import { z } from 'zod';

/**
 * Building blocks of the event schemas. Objects are `z.object`: a consumer parsing an event drops fields it does
 * not know (a newer producer may add one), while the producer check (registry.ts) refuses any field the schema
 * does not list, so a schema always describes everything its producers send.
 */

/** Any 8-4-4-4-12 hex id: the outbox derives name-based ids whose version nibble is not 4. */
export const Id = z.guid();
/** A user, team or other reference that may be empty or absent as null. */
export const Ref = z.string();
/** An instant as the producers write it (Date#toISOString). */
export const Instant = z.iso.datetime({ offset: true });
export const ThreadType = z.enum(['user', 'group']);
/** A contact's custom fields: numbers and booleans as such, text, select and date as strings. */
export const CustomFields = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));
/** Names of the fields that changed, as the producer's resource calls them. */
export const Changes = z.array(z.string());
