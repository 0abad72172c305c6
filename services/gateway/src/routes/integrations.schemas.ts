import { z } from 'zod';
import type { crm } from '@crm/proto-types';
import { proto, reply, replyItem } from '../docs/proto-schema';
import { s } from '../http/validate';

// ------------------------------------------------------------------------------------------- request bodies

export const Credentials = z.object({
  // "" removes the token; the key itself is required so a typo never removes it by accident.
  accessToken: z.string({ error: 'is required ("" removes the token)' }).trim().max(4096, 'must be at most 4096 characters'),
});

export const SyncRequest = z.object({
  pageId: s.requiredText(128),
  formId: s.requiredText(128),
});

export const SandboxPage = z.object({
  name: s.requiredText(200),
  followers: z
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .min(0, 'must not be negative')
    .max(2_000_000_000, 'must be at most 2000000000')
    .default(0),
});

export const SandboxForm = z.object({ name: s.requiredText(200) });

const answer = z.union([z.string().max(2000, 'must be at most 2000 characters'), z.number(), z.boolean()], {
  error: 'must be a string, number or boolean',
});

/** A lead as a form submission: the known keys, `fields` for the other answers, and any other key as an answer too. */
export const SandboxLead = z
  .object({
    id: z
      .string({ error: 'must be a string' })
      .trim()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, - or _')
      .optional(),
    fullName: z.string({ error: 'must be a string' }).max(500, 'must be at most 500 characters').default(''),
    phone: z.string({ error: 'must be a string' }).max(100, 'must be at most 100 characters').default(''),
    email: z.string({ error: 'must be a string' }).max(500, 'must be at most 500 characters').default(''),
    fields: z.record(z.string().max(200, 'keys must be at most 200 characters'), answer).optional(),
  })
  .catchall(answer);

export const SandboxLeads = z.object({
  leads: z.array(SandboxLead, { error: 'must be an array of leads' }).min(1, 'must have at least one lead').max(5000, 'must have at most 5000 leads'),
});

export const SandboxOutage = z.object({
  afterLeads: z
    .number({ error: 'is required: an integer, or null to end the outage' })
    .int('must be an integer')
    .min(0, 'must not be negative')
    .nullable(),
});

// ------------------------------------------------------------------------------------------- responses

/** A service's answer forwarded untouched: documented from its proto, typed as the generated client gives it. */
const forwarded = <T>(schema: z.ZodType) => schema as unknown as z.ZodType<T>;

const INTEGRATIONS = 'crm/v1/integrations.proto';

/** integrations.out integrationOut: config as an object. */
export const Integration = z.object({
  id: z.string(),
  type: z.string().meta({ description: 'socialnet' }),
  name: z.string(),
  status: z.enum(['connected', 'disconnected', 'auth_expired']),
  config: z.record(z.string(), z.unknown()).meta({ description: '{pageId, formCount} for socialnet' }),
  lastSync: z.string().nullable(),
  createdAt: z.string(),
});

/** integrations.out credentialsOut: only whether a token is stored, and its mask. */
export const CredentialsStatus = z.object({ hasToken: z.boolean(), tokenMask: z.string(), updatedAt: z.string().nullable() });

/** integrations.out leadSyncOut. */
export const LeadSync = z.object({
  syncId: z.string(),
  integrationId: z.string(),
  pageId: z.string(),
  formId: z.string(),
  status: z.enum(['processing', 'completed', 'failed']),
  estimatedCount: z.number().int(),
  counts: forwarded<crm.LeadSyncCounts__Output>(proto(INTEGRATIONS, 'crm.v1.LeadSyncCounts')),
  skippedLeads: z.array(proto(INTEGRATIONS, 'crm.v1.SkippedLead')),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  completedAt: z.string().nullable(),
});

/** integrations.out leadSyncStartedOut. */
export const LeadSyncStarted = z.object({ syncId: z.string(), status: z.string(), estimatedCount: z.number().int(), alreadyRunning: z.boolean() });

export const SocialnetPages = forwarded<crm.SocialnetPage__Output[]>(z.array(replyItem('crmIntegrations', 'ListSocialnetPages')));
export const SocialnetForms = forwarded<crm.SocialnetForm__Output[]>(z.array(replyItem('crmIntegrations', 'ListSocialnetForms')));
export const SandboxPageCreated = forwarded<crm.SocialnetPage__Output>(reply('crmIntegrations', 'SandboxCreatePage'));
export const SandboxFormCreated = forwarded<crm.SocialnetForm__Output>(reply('crmIntegrations', 'SandboxCreateForm'));
export const SandboxLeadsAdded = forwarded<crm.SandboxLeadsResult__Output>(reply('crmIntegrations', 'SandboxAddLeads'));
