import { z } from 'zod';
import { crmRules as rules, EMAIL_MAX, EMAIL_MESSAGE, EMAIL_PATTERN } from '@crm/validation';
import { s } from '../../http/validate';

// Field rules shared by more than one crm resource's request schemas. Every limit, enum and value rule comes
// from @crm/validation's crmRules, the one statement of them that crm applies too.

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
export const tags = z
  .array(z.string({ error: 'must be an array of strings' }).trim().max(rules.MAX_TAG_LENGTH, rules.TAG_TOO_LONG), {
    error: 'must be an array of strings',
  })
  .max(rules.MAX_TAGS, rules.TOO_MANY_TAGS);
export const email = z
  .union([z.literal(''), z.string().trim().toLowerCase().max(EMAIL_MAX, EMAIL_MESSAGE).regex(EMAIL_PATTERN, EMAIL_MESSAGE), z.null()])
  .transform((v) => v ?? '')
  .optional();
export const position = z
  .number({ error: 'must be an integer' })
  .int(rules.POSITION_MESSAGE)
  .min(0, rules.POSITION_MESSAGE)
  .max(rules.MAX_POSITION, rules.POSITION_MESSAGE);

export { byRule } from '../../http/by-rule';

/**
 * {key: value} of the org's custom fields; keys and typed values are checked by crm against the definitions
 * (400 naming customFields.<key>); null removes a key on update.
 */
export const customFieldValues = z
  .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()], { error: 'each value must be a string, number, boolean or null' }), {
    error: 'must be an object of {key: value}',
  })
  .optional();
