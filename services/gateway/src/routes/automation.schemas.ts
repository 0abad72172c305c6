import { z } from 'zod';
import type { automation } from '@crm/proto-types';
import { TRIGGER_TYPES } from '@crm/events';
import { automationRules as rules } from '@crm/validation';
import { documentedAs } from '../docs/registry';
import { nulls, proto, reply, replyItem } from '../docs/proto-schema';
import { s } from '../http/validate';

/**
 * Automation rules and their runs, message templates, campaigns and their recipients, notifications and appointment
 * reminders (automation.routes.ts): the request schemas, checked with the limits and enums automation applies too
 * (@crm/validation automationRules), and the response schemas the mappers (automation.out.ts) are typed by.
 */

const LIMITS = rules.RULE_LIMITS;

const str = (max = 4000) => z.string({ error: 'must be a string' }).max(max, `must be at most ${max} characters`);

export const Condition = z.object(
  {
    field: str(LIMITS.conditionField).optional(),
    operator: str(LIMITS.slug).optional(),
    value: z.unknown(),
  },
  { error: 'must be an object {field, operator, value}' },
);

export const Trigger = z.object(
  {
    type: str(LIMITS.slug).optional(),
    conditions: z.array(Condition, { error: 'must be an array' }).max(LIMITS.conditions, rules.TOO_MANY_CONDITIONS).optional(),
    keywords: z.array(str(LIMITS.keywordLength), { error: 'must be an array of strings' }).max(LIMITS.keywords, rules.TOO_MANY_KEYWORDS).optional(),
    // schedule: a five-field cron expression read in an IANA time zone, optionally over a customer list's members.
    cron: str(200).optional().describe('schedule: minute hour day-of-month month day-of-week (ranges, steps, lists, names; @daily …)'),
    timezone: str(64).optional().describe('schedule: the IANA time zone the cron is read in, e.g. Asia/Ho_Chi_Minh or UTC'),
    listId: str(100).optional().describe('schedule: one run per member of this customer list at each firing; without it one run with no contact'),
    // conversation_idle: minutes without a message (fractions allowed, at least one second), optionally only in a status.
    minutes: z.number({ error: 'must be a number of minutes' }).optional().describe('conversation_idle: minutes without a message'),
    status: str(20).optional().describe('conversation_idle: fire only if the conversation has this status then (active, pending, snoozed, closed)'),
  },
  { error: 'must be an object {type, conditions}' },
);

export const Action = z.object(
  {
    type: str(LIMITS.slug).optional(),
    template: str(LIMITS.text).optional(),
    templateId: str(100).optional(),
    title: str(LIMITS.title).optional(),
    message: str(LIMITS.text).optional(),
    userId: str(100).optional(),
    tag: str(LIMITS.tag).optional(),
    // "10m", "2h", or a number of seconds.
    duration: z
      .union([str(20), z.number({ error: 'must be a duration like "10m" or a number of seconds' })], {
        error: 'must be a duration like "10m" or a number of seconds',
      })
      .optional(),
    notificationType: str(LIMITS.slug).optional(),
    // create_task: minutes from the run to the task's due time, and whom it is for.
    dueInMinutes: z
      .number({ error: 'must be a whole number of minutes' })
      .int('must be a whole number of minutes')
      .min(0, `must be between 0 and ${LIMITS.waitSeconds / 60} minutes`)
      .max(LIMITS.waitSeconds / 60, `must be between 0 and ${LIMITS.waitSeconds / 60} minutes`)
      .optional(),
    assignTo: str(100).optional(),
    // set_priority: low, medium, high, urgent, or null to clear it (automation names a bad value).
    priority: z.union([z.null(), str(20)], { error: 'must be low, medium, high, urgent or null' }).optional(),
    // if: the trigger's condition language (plus steps.<n>.status / steps.<n>.body.<field>), then and else steps.
    conditions: z.array(Condition, { error: 'must be an array' }).max(LIMITS.conditions, rules.TOO_MANY_CONDITIONS).optional(),
    // Steps inside an if: the same actions (automation checks the nesting depth and names the step).
    get then(): z.ZodOptional<z.ZodArray<typeof Action>> {
      return z.array(Action, { error: 'must be an array of actions' }).max(LIMITS.actions, rules.TOO_MANY_ACTIONS).optional();
    },
    get else(): z.ZodOptional<z.ZodArray<typeof Action>> {
      return z.array(Action, { error: 'must be an array of actions' }).max(LIMITS.actions, rules.TOO_MANY_ACTIONS).optional();
    },
    // wait: minutes instead of duration (fractions allowed).
    minutes: z.number({ error: 'must be a number of minutes' }).optional(),
    // http_request: where and how; the body is a template ({{placeholders}}, steps.<n>.* of earlier steps).
    url: str(LIMITS.url).optional(),
    method: str(10).optional(),
    headers: z
      .record(str(100), str(LIMITS.headerValue), { error: 'must be an object of header name → text' })
      .refine((h) => Object.keys(h).length <= LIMITS.headers, `must have at most ${LIMITS.headers} headers`)
      .optional(),
    bodyTemplate: str(LIMITS.bodyTemplate).optional(),
  },
  { error: 'must be an object with a type' },
);

/**
 * Action as the OpenAPI document shows it: JSON Schema of a recursive zod schema refers to itself through `$defs`,
 * which no operation schema of the document can resolve, so the steps inside an if are described one level deep.
 */
const NestedStep = z
  .looseObject({ type: z.string() })
  .meta({ description: 'a step of the same shape as the actions (if steps nest at most 5 levels)' });
export const ActionDoc = Action.omit({ then: true, else: true }).extend({
  then: z.array(NestedStep).optional().meta({ description: 'if: the steps when every condition holds' }),
  else: z.array(NestedStep).optional().meta({ description: 'if: the steps otherwise' }),
});

export const Actions = z.array(Action, { error: 'must be an array of actions' }).max(LIMITS.actions, rules.TOO_MANY_ACTIONS);

const RuleFields = z.object({
  name: str(LIMITS.name).optional(),
  description: str(LIMITS.description).optional(),
  type: str(LIMITS.slug).optional(),
  trigger: Trigger.optional(),
  actions: Actions.optional(),
});
/** A rule's body: parsed with every level of steps (Action), documented with them one level deep (ActionDoc). */
export const NewRule = documentedAs(RuleFields, RuleFields.extend({ actions: z.array(ActionDoc).max(LIMITS.actions).optional() }));

export const RuleQuery = z.object({
  status: s.optionalQueryEnum(rules.RULE_STATUSES),
  type: z.string().max(LIMITS.slug).optional(),
  triggerType: s.optionalQueryEnum(TRIGGER_TYPES),
});

export const NewTemplate = z.object({
  name: str(rules.TEMPLATE_TEXT_MAX.name).optional(),
  content: str(rules.TEMPLATE_TEXT_MAX.content).optional(),
  category: str(rules.TEMPLATE_TEXT_MAX.category).optional(),
  variables: z
    .array(str(rules.TEMPLATE_TEXT_MAX.variable), { error: 'must be an array of strings' })
    .max(rules.MAX_TEMPLATE_VARIABLES, rules.TOO_MANY_VARIABLES)
    .optional(),
});

export const NewCampaign = z.object({
  name: str(rules.CAMPAIGN_TEXT_MAX.name).optional(),
  description: str(rules.CAMPAIGN_TEXT_MAX.description).optional(),
  type: str(50).optional(),
  listId: str(100).optional(),
  templateId: str(100).optional(),
  // Email campaigns: the subject line (placeholders like the template).
  subject: str(rules.CAMPAIGN_TEXT_MAX.subject).optional(),
  // ISO timestamp; null (on update) clears it.
  schedule: z.union([str(100), z.null()], { error: 'must be an ISO 8601 timestamp or null' }).optional(),
  // Names → string, number or boolean values; what the names and values may be is checked by the service.
  variables: z.record(z.string(), z.unknown(), { error: 'must be an object of name → value' }).optional(),
  chatnetAccountId: z
    .union([str(100), z.null()], { error: 'must be a chat-network account id or null' })
    .optional()
    .describe(
      'broadcasts: the account that writes first to recipients without a conversation; unset: the account the contact last used, else the org’s most recently connected one (null on update clears it)',
    ),
});

export const ScheduleBody = z.object({ schedule: str(100).optional() });

export const RunRuleBody = z.object({
  contactId: str(100).optional().describe('the contact the run acts on'),
  conversationId: str(100).optional().describe('the conversation the run acts on (send_message goes there)'),
});

export const RunQuery = z.object({ status: s.optionalQueryEnum(rules.RUN_STATUSES) });
export const TemplateQuery = z.object({ category: z.string().max(rules.TEMPLATE_TEXT_MAX.category).optional() });
export const CampaignQuery = z.object({ status: s.optionalQueryEnum(rules.CAMPAIGN_STATUSES) });
export const RecipientQuery = z.object({ status: s.optionalQueryEnum(rules.RECIPIENT_STATUSES) });
/** `unreadOnly=true|1|false|0`; absent or empty is false. */
export const NotificationQuery = z.object({
  unreadOnly: z
    .enum(['true', '1', 'false', '0', ''], { error: 'must be true or false' })
    .optional()
    .transform((v) => v === 'true' || v === '1'),
});

export const AppointmentSettings = z.object({
  reminderMinutesBefore: z
    .number({ error: rules.REMINDER_MESSAGE })
    .int(rules.REMINDER_MESSAGE)
    .min(0, rules.REMINDER_MESSAGE)
    .max(rules.MAX_REMINDER_MINUTES, rules.REMINDER_MESSAGE),
});

// ------------------------------------------------------------------------------------------- responses

const AUTOMATION = 'automation/v1/automation.proto';
/** A service's answer forwarded untouched: documented from its proto, typed as the generated client gives it. */
const forwarded = <T>(schema: z.ZodType) => schema as unknown as z.ZodType<T>;
const iso = () => z.string().meta({ description: 'ISO 8601 UTC timestamp' });

/** An automation rule (ruleOut is typed by it): condition values as JSON values, not JSON text. */
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
export const RuleCreated = Rule.pick({ id: true, name: true, status: true, createdAt: true }).extend({
  secret: z.string().meta({
    description:
      'The signing secret of the rule’s http_request steps (`whsec_…`), shown only here and by POST /automation/rules/:id/rotate-secret; never in reads or lists.',
  }),
});

/** One step of a run (in runOut). */
export const RunStep = z.object({
  path: z.string().meta({ description: 'where the step is in the rule’s actions, e.g. actions.1.then.0' }),
  type: z.string(),
  status: z.enum(['running', 'waiting', 'succeeded', 'failed']),
  branch: z.enum(['then', 'else']).optional().meta({ description: 'if steps: the way the run went' }),
  startedAt: iso(),
  finishedAt: z.string().nullable(),
  error: z.string().nullable(),
});

/** One run of a rule (runOut is typed by it): unset values as null. */
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

export const RunStarted = z.object({ runId: z.string().meta({ description: 'GET /automation/runs/{runId} follows it' }) });

export const RuleSecret = z.object({ secret: z.string().meta({ description: 'the new signing secret (`whsec_…`), shown this once' }) });

/** A template (templateOut is typed by it): no category is null. */
export const Template = nulls(proto(AUTOMATION, 'automation.v1.Template'), ['category']);
export const TemplateCreated = z.object({ id: z.string(), name: z.string(), createdAt: z.string() });

/** A campaign (campaignOut is typed by it): variables as an object, unset values as null. */
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

/** A campaign's recipient (recipientOut is typed by it): unset values as null (a contact without a phone or an email address too). */
export const Recipient = nulls(proto(AUTOMATION, 'automation.v1.Recipient'), [
  'phone',
  'email',
  'error',
  'conversationId',
  'messageId',
  'sentAt',
  'repliedAt',
  'seenAt',
  'nextAttemptAt',
]);

/** An in-app notification (notificationOut is typed by it): no resource is null. */
export const Notification = nulls(proto(AUTOMATION, 'automation.v1.Notification'), ['resourceId']);

/** GET /automation/templates: each template as templateOut gives it. */
export const TemplateItem = nulls(replyItem('automation', 'ListTemplates'), ['category']);
export const UpdatedTemplate = nulls(reply('automation', 'UpdateTemplate'), ['category']);
export const NotificationList = reply('automation', 'ListNotifications').extend({ data: z.array(Notification) });
export const NotificationsRead = forwarded<automation.MarkAllReadResult__Output>(reply('automation', 'MarkAllNotificationsRead'));
export const ReminderSettings = forwarded<automation.AppointmentSettings__Output>(reply('automation', 'GetAppointmentSettings'));
export const UpdatedReminderSettings = forwarded<automation.AppointmentSettings__Output>(reply('automation', 'UpdateAppointmentSettings'));
