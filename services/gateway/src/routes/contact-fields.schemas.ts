import { z } from 'zod';
import { crmRules as rules } from '@crm/validation';
import type { ImportSummary } from '../csv/contact-import';
import { reply } from '../docs/proto-schema';
import { s } from '../http/validate';
import { position } from './crm';

const options = z
  .array(z.string({ error: 'must be an array of strings' }).trim().min(1, rules.EMPTY_OPTION).max(rules.OPTION_MAX, rules.OPTION_TOO_LONG), {
    error: 'must be an array of strings',
  })
  .max(rules.MAX_OPTIONS, rules.TOO_MANY_OPTIONS);

export const NewContactField = z.object({
  key: z.string({ error: 'is required' }).trim().regex(rules.FIELD_KEY_PATTERN, rules.FIELD_KEY_MESSAGE),
  label: s.requiredText(rules.FIELD_LABEL_MAX),
  type: s.enumOf(rules.FIELD_TYPES),
  options: options.optional(),
  position: position.optional(),
});
// key and type are fixed once created (crm answers 400 when they differ); sending the same ones is harmless.
export const ContactFieldPatch = z.object({
  key: z.string().optional(),
  label: s.requiredText(rules.FIELD_LABEL_MAX).optional(),
  type: z.string().optional(),
  options: options.optional(),
  position: position.optional(),
});

export const ImportQuery = z.object({ dryRun: z.enum(['true', 'false'], { error: 'must be true or false' }).optional() });

/** The import's summary (csv/contact-import.ts), documented as crm's answer to one batch, which it adds up. */
export const ImportResult = reply('crmTransfer', 'ImportContacts') as unknown as z.ZodType<ImportSummary>;

/** A custom contact field's definition, as crm's ContactField (options is [] for every type but select). */
export const ContactField = z.object({
  id: z.string(),
  key: z.string(),
  label: z.string(),
  type: z.string(),
  options: z.array(z.string()),
  position: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
