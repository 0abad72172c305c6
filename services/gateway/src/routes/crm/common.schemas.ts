import { z } from 'zod';
import { s } from '../../http/validate';

// Field rules shared by more than one crm resource's request schemas.

export const uuid = (what: string) => z.string().uuid(`must be ${what} id`);
/** null or "" clears an optional reference. */
export const clearableId = (what: string) =>
  z
    .union([uuid(what), z.literal(''), z.null()])
    .transform((v) => v ?? '')
    .optional();
/** null means empty for text fields. */
export const text = (max: number) =>
  z
    .union([s.text(max), z.null()])
    .transform((v) => v ?? '')
    .optional();
export const tags = z.array(z.string({ error: 'must be an array of strings' }).trim().max(50, 'each tag must be at most 50 characters'), { error: 'must be an array of strings' }).max(50, 'must have at most 50 tags');
export const email = z
  .union([z.literal(''), z.string().trim().email('must be a valid email address').max(254), z.null()])
  .transform((v) => v ?? '')
  .optional();

/**
 * {key: value} of the org's custom fields; keys and typed values are checked by crm against the definitions
 * (400 naming customFields.<key>); null removes a key on update.
 */
export const customFieldValues = z
  .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()], { error: 'each value must be a string, number, boolean or null' }), {
    error: 'must be an object of {key: value}',
  })
  .optional();
