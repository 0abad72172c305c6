import { z } from 'zod';
import type { campaignBriefOut, campaignCreatedOut, campaignOut, ruleCreatedOut, ruleOut, runOut } from '../../routes/automation.out';
import { ActionDoc } from '../../routes/automation.routes';
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
  trigger: z
    .object({
      type: z.string(),
      conditions: z.array(z.object({ field: z.string(), operator: z.string(), value: z.unknown() })),
      keywords: z.array(z.string()).optional().meta({ description: 'only on keyword triggers' }),
      cron: z.string().optional().meta({ description: 'schedule triggers: five-field cron expression (minute hour day-of-month month day-of-week)' }),
      timezone: z.string().optional().meta({ description: 'schedule triggers: the IANA time zone the cron is read in' }),
      listId: z
        .string()
        .nullable()
        .optional()
        .meta({ description: 'schedule triggers: the customer list whose members each get a run at every firing (null: one run, no contact)' }),
      minutes: z.number().optional().meta({ description: 'conversation_idle triggers: minutes without a message before it fires' }),
      status: z
        .string()
        .nullable()
        .optional()
        .meta({ description: 'conversation_idle triggers: fires only if the conversation then has this status (null: any)' }),
    })
    .meta({
      description:
        'What starts the rule: an event type (conditions judged on it), `schedule` {cron, timezone, listId?} (at each cron time in the zone: one run per list member, or one run with no contact), or `conversation_idle` {minutes, status?} (a conversation without a message for that long, once per idle period; a new message re-arms it). Timed triggers take no conditions (use an if step).',
    }),
  actions: z.array(ActionDoc).meta({
    description:
      'Steps in order. Besides the plain actions: `if` {conditions, then, else} (nested at most 5 levels), `wait` {duration | minutes}, `http_request` {url, method, headers, bodyTemplate}, signed with the rule’s secret (webhook-id, webhook-timestamp, webhook-signature as webhooks are); its answer is `{{steps.<n>.status}}` / `{{steps.<n>.body.<field>}}` for later steps, n being the step’s place in the run’s `steps`.',
  }),
  status: z.enum(['draft', 'active', 'paused']),
  createdAt: iso(),
  updatedAt: iso(),
  runCount: z.number().int(),
  lastRunAt: z.string().nullable(),
});
keysMatch<z.infer<typeof Rule>, ReturnType<typeof ruleOut>>(true);
export const RuleCreated = Rule.pick({ id: true, name: true, status: true, createdAt: true }).extend({
  secret: z.string().meta({
    description:
      'The signing secret of the rule’s http_request steps (`whsec_…`), shown only here and by POST /automation/rules/:id/rotate-secret; never in reads or lists.',
  }),
});
keysMatch<z.infer<typeof RuleCreated>, ReturnType<typeof ruleCreatedOut>>(true);

/** One step of a run (automation.out runOut). */
export const RunStep = z.object({
  path: z.string().meta({ description: 'where the step is in the rule’s actions, e.g. actions.1.then.0' }),
  type: z.string(),
  status: z.enum(['running', 'waiting', 'succeeded', 'failed']),
  branch: z.enum(['then', 'else']).optional().meta({ description: 'if steps: the way the run went' }),
  startedAt: iso(),
  finishedAt: z.string().nullable(),
  error: z.string().nullable(),
});

/** One run of a rule (automation.out runOut): unset values as null. */
export const Run = z.object({
  id: z.string(),
  ruleId: z.string(),
  trigger: z
    .string()
    .meta({ description: 'the trigger type that started the run (`schedule`, `conversation_idle`, `manual` for a run started by hand, …)' }),
  eventId: z.string().meta({ description: 'the triggering event: one run per rule and event, however often it is delivered' }),
  eventType: z.string(),
  contactId: z.string().nullable(),
  conversationId: z.string().nullable(),
  status: z.enum(['running', 'waiting', 'succeeded', 'failed', 'cancelled']).meta({
    description: 'running (queued, under way or retrying), waiting (a wait step), succeeded, failed, cancelled (its rule was paused or deleted)',
  }),
  steps: z.array(RunStep),
  startedAt: iso(),
  actionsDone: z.number().int(),
  totalActions: z.number().int(),
  error: z.string().nullable(),
  attempts: z.number().int(),
  resumeAt: z.string().nullable(),
  createdAt: iso(),
  updatedAt: iso(),
  finishedAt: z.string().nullable(),
});
keysMatch<z.infer<typeof Run>, ReturnType<typeof runOut>>(true);

export const RunStarted = z.object({ runId: z.string().meta({ description: 'GET /automation/runs/{runId} follows it' }) });

export const RuleSecret = z.object({ secret: z.string().meta({ description: 'the new signing secret (`whsec_…`), shown this once' }) });

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
