import { z } from 'zod';
import type { campaignBriefOut, campaignCreatedOut, campaignOut, ruleCreatedOut, ruleOut } from '../../routes/automation.out';
import { nulls, proto, reply } from '../proto-schema';
import { keysMatch } from './check';

const AUTOMATION = 'automation/v1/automation.proto';
const iso = () => z.string().meta({ description: 'ISO 8601 UTC timestamp' });

/** An automation rule (automation.out ruleOut): condition values as JSON values, not JSON text. */
export const Rule = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  type: z.string(),
  trigger: z.object({
    type: z.string(),
    conditions: z.array(z.object({ field: z.string(), operator: z.string(), value: z.unknown() })),
    keywords: z.array(z.string()).optional().meta({ description: 'only on keyword triggers' }),
  }),
  actions: z.array(proto(AUTOMATION, 'automation.v1.Action')),
  status: z.enum(['draft', 'active', 'paused']),
  createdAt: iso(),
  updatedAt: iso(),
  runCount: z.number().int(),
  lastRunAt: z.string().nullable(),
});
keysMatch<z.infer<typeof Rule>, ReturnType<typeof ruleOut>>(true);
export const RuleCreated = Rule.pick({ id: true, name: true, status: true, createdAt: true });
keysMatch<z.infer<typeof RuleCreated>, ReturnType<typeof ruleCreatedOut>>(true);

/** One run of a rule (automation.out runOut): unset values as null. */
export const Run = nulls(proto(AUTOMATION, 'automation.v1.Run'), ['contactId', 'error', 'resumeAt', 'finishedAt']);

/** automation.out templateOut: no category is null. */
export const Template = nulls(proto(AUTOMATION, 'automation.v1.Template'), ['category']);
export const TemplateCreated = Template.pick({ id: true, name: true, createdAt: true });

/** A campaign (automation.out campaignOut): variables as an object, unset values as null. */
export const Campaign = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  type: z.enum(['broadcast', 'email']).meta({ description: 'broadcast (chat network) or email' }),
  listId: z.string(),
  templateId: z.string(),
  subject: z.string().nullable().meta({ description: 'email campaigns only' }),
  chatnetAccountId: z.string().nullable().meta({
    description:
      'broadcasts: the account that starts conversations with recipients who have none; null: the account the contact last used, else the org’s most recently connected one',
  }),
  schedule: z.string().nullable(),
  variables: z.record(z.string(), z.unknown()),
  status: z.enum(['draft', 'active', 'paused', 'completed', 'cancelled']),
  contactCount: z.number().int(),
  sentCount: z.number().int(),
  openRate: z.number(),
  replyRate: z.number(),
  counts: reply('automation', 'GetCampaign').shape.counts,
  recipientsReady: z.boolean(),
  lastError: z.string().nullable(),
  createdAt: iso(),
  updatedAt: iso(),
  activatedAt: z.string().nullable(),
  completedAt: z.string().nullable(),
  cancelledAt: z.string().nullable(),
});
keysMatch<z.infer<typeof Campaign>, ReturnType<typeof campaignOut>>(true);
export const CampaignBrief = Campaign.pick({
  id: true,
  name: true,
  type: true,
  status: true,
  contactCount: true,
  sentCount: true,
  openRate: true,
  createdAt: true,
});
export const CampaignCreated = Campaign.pick({ id: true, name: true, status: true, createdAt: true });
keysMatch<z.infer<typeof CampaignBrief>, ReturnType<typeof campaignBriefOut>>(true);
keysMatch<z.infer<typeof CampaignCreated>, ReturnType<typeof campaignCreatedOut>>(true);

/** A campaign's recipient (automation.out recipientOut): unset values as null. */
export const Recipient = nulls(proto(AUTOMATION, 'automation.v1.Recipient'), [
  'error',
  'conversationId',
  'messageId',
  'sentAt',
  'repliedAt',
  'seenAt',
  'nextAttemptAt',
]);

/** An in-app notification (automation.out notificationOut): no resource is null. */
export const Notification = nulls(proto(AUTOMATION, 'automation.v1.Notification'), ['resourceId']);
