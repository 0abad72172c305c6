import { Router } from 'express';
import { z } from 'zod';
import { TRIGGER_TYPES } from '@crm/events';
import { automationRules as rules } from '@crm/validation';
import {
  campaignBriefOut,
  campaignCreatedOut,
  campaignOut,
  notificationOut,
  recipientOut,
  ruleCreatedOut,
  ruleOut,
  runOut,
  templateCreatedOut,
  templateOut,
} from './automation.out';
import type { RouteDeps, ServiceRoutes } from './deps';
import { badRequest } from '../http/errors';
import { ctxOf } from '../http/principal';
import { fieldPath, pageParams, s } from '../http/validate';

/**
 * Automation rules and their run logs, message templates, campaigns and their recipients, and in-app
 * notifications (all owned by the automation service). The shapes are checked here with the limits and enums
 * automation applies too (@crm/validation automationRules); what the values mean (trigger types, operators,
 * action types, ids that must exist) is checked by the service, and both name a rule's field by its dotted path:
 * `trigger.conditions.0.value`, `actions.2.then.0.url`.
 */

const LIMITS = rules.RULE_LIMITS;

function parse<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const r = schema.safeParse(value ?? {});
  if (!r.success) throw badRequest(r.error.issues.map((i) => ({ field: fieldPath(i.path) || 'body', message: i.message })));
  return r.data;
}

/** A rule's body: fields named by their dotted path, array items by index (`actions.2.then.0.url`, as issue #32 writes it). */
function parseRule<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const r = schema.safeParse(value ?? {});
  if (!r.success) throw badRequest(r.error.issues.map((i) => ({ field: i.path.map(String).join('.') || 'body', message: i.message })));
  return r.data;
}

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

export const NewRule = z.object({
  name: str(LIMITS.name).optional(),
  description: str(LIMITS.description).optional(),
  type: str(LIMITS.slug).optional(),
  trigger: Trigger.optional(),
  actions: Actions.optional(),
});

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

function campaignMsg(b: z.infer<typeof NewCampaign>) {
  const { variables, schedule, chatnetAccountId, ...rest } = b;
  return {
    ...rest,
    schedule: schedule === null ? '' : schedule,
    chatnetAccountId: chatnetAccountId === null ? '' : chatnetAccountId,
    variablesJson: variables === undefined ? undefined : JSON.stringify(variables),
  };
}

type TriggerBody = z.infer<typeof Trigger>;
type ActionBody = z.infer<typeof Action>;

function triggerMsg(t: TriggerBody | undefined) {
  if (!t) return undefined;
  return {
    type: t.type ?? '',
    conditions: (t.conditions ?? []).map(conditionMsg),
    keywords: t.keywords ?? [],
    cron: t.cron,
    timezone: t.timezone,
    listId: t.listId,
    minutes: t.minutes,
    status: t.status,
  };
}

const conditionMsg = (c: z.infer<typeof Condition>) => ({
  field: c.field ?? '',
  operator: c.operator ?? '',
  valueJson: c.value === undefined ? '' : JSON.stringify(c.value),
});

function actionMsg(a: ActionBody): Record<string, unknown> {
  return {
    ...a,
    type: a.type ?? '',
    duration: a.duration === undefined ? undefined : String(a.duration),
    // null (clear) travels as "" (proto3 strings have no null).
    priority: a.priority === null ? '' : a.priority,
    conditions: (a.conditions ?? []).map(conditionMsg),
    then: (a.then ?? []).map(actionMsg),
    else: (a.else ?? []).map(actionMsg),
    headers: a.headers ?? {},
  };
}

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

export function automationRoutes({ clients }: RouteDeps): ServiceRoutes {
  const r = Router();
  const automation = () => clients.automation;

  r.get('/automation/rules', async (req, res) => {
    const q = parse(RuleQuery, req.query);
    const out = await automation().ListRules({ ...pageParams(req, 50), ...q }, ctxOf(req, res));
    res.json({ data: out.data.map(ruleOut), pagination: out.pagination });
  });
  r.post('/automation/rules', async (req, res) => {
    const b = parseRule(NewRule, req.body);
    const rule = await automation().CreateRule(
      { ...b, trigger: triggerMsg(b.trigger), actions: (b.actions ?? []).map(actionMsg), setActions: true },
      ctxOf(req, res),
    );
    res.status(201).json(ruleCreatedOut(rule));
  });
  r.get('/automation/rules/:id', async (req, res) => {
    res.json(ruleOut(await automation().GetRule({ id: req.params.id }, ctxOf(req, res))));
  });
  r.put('/automation/rules/:id', async (req, res) => {
    const b = parseRule(NewRule, req.body);
    const rule = await automation().UpdateRule(
      { ...b, id: req.params.id, trigger: triggerMsg(b.trigger), actions: (b.actions ?? []).map(actionMsg), setActions: b.actions !== undefined },
      ctxOf(req, res),
    );
    res.json(ruleOut(rule));
  });
  r.post('/automation/rules/:id/activate', async (req, res) => {
    res.json(ruleOut(await automation().ActivateRule({ id: req.params.id }, ctxOf(req, res))));
  });
  r.post('/automation/rules/:id/pause', async (req, res) => {
    res.json(ruleOut(await automation().PauseRule({ id: req.params.id }, ctxOf(req, res))));
  });
  r.delete('/automation/rules/:id', async (req, res) => {
    await automation().DeleteRule({ id: req.params.id }, ctxOf(req, res));
    res.status(204).end();
  });
  r.get('/automation/rules/:id/runs', async (req, res) => {
    const { status } = parse(RunQuery, req.query);
    const out = await automation().ListRuleRuns({ ruleId: req.params.id, ...pageParams(req, 50), status }, ctxOf(req, res));
    res.json({ data: out.data.map(runOut), pagination: out.pagination });
  });
  r.post('/automation/rules/:id/rotate-secret', async (req, res) => {
    res.json(await automation().RotateRuleSecret({ id: req.params.id }, ctxOf(req, res)));
  });
  r.post('/automation/rules/:id/run', async (req, res) => {
    const b = parse(RunRuleBody, req.body);
    res.status(202).json(await automation().RunRule({ id: req.params.id, ...b }, ctxOf(req, res)));
  });
  r.get('/automation/runs/:runId', async (req, res) => {
    res.json(runOut(await automation().GetRun({ id: req.params.runId }, ctxOf(req, res))));
  });

  r.get('/automation/templates', async (req, res) => {
    const { category } = parse(TemplateQuery, req.query);
    const out = await automation().ListTemplates({ category }, ctxOf(req, res));
    res.json(out.data.map(templateOut));
  });
  r.post('/automation/templates', async (req, res) => {
    const b = parse(NewTemplate, req.body);
    const t = await automation().CreateTemplate({ ...b, variables: b.variables ?? [], setVariables: b.variables !== undefined }, ctxOf(req, res));
    res.status(201).json(templateCreatedOut(t));
  });
  r.get('/automation/templates/:id', async (req, res) => {
    res.json(templateOut(await automation().GetTemplate({ id: req.params.id }, ctxOf(req, res))));
  });
  r.put('/automation/templates/:id', async (req, res) => {
    const b = parse(NewTemplate, req.body);
    res.json(
      templateOut(
        await automation().UpdateTemplate(
          { ...b, id: req.params.id, variables: b.variables ?? [], setVariables: b.variables !== undefined },
          ctxOf(req, res),
        ),
      ),
    );
  });
  r.delete('/automation/templates/:id', async (req, res) => {
    await automation().DeleteTemplate({ id: req.params.id }, ctxOf(req, res));
    res.status(204).end();
  });

  r.get('/campaigns', async (req, res) => {
    const { status } = parse(CampaignQuery, req.query);
    const out = await automation().ListCampaigns({ status }, ctxOf(req, res));
    res.json(out.data.map(campaignBriefOut));
  });
  r.post('/campaigns', async (req, res) => {
    res.status(201).json(campaignCreatedOut(await automation().CreateCampaign(campaignMsg(parse(NewCampaign, req.body)), ctxOf(req, res))));
  });
  r.get('/campaigns/:id', async (req, res) => {
    res.json(campaignOut(await automation().GetCampaign({ id: req.params.id }, ctxOf(req, res))));
  });
  r.put('/campaigns/:id', async (req, res) => {
    const b = parse(NewCampaign, req.body);
    res.json(campaignOut(await automation().UpdateCampaign({ ...campaignMsg(b), id: req.params.id }, ctxOf(req, res))));
  });
  r.post('/campaigns/:id/schedule', async (req, res) => {
    const { schedule } = parse(ScheduleBody, req.body);
    res.json(campaignOut(await automation().ScheduleCampaign({ id: req.params.id, schedule: schedule ?? '' }, ctxOf(req, res))));
  });
  r.post('/campaigns/:id/activate', async (req, res) => {
    res.json(campaignOut(await automation().ActivateCampaign({ id: req.params.id }, ctxOf(req, res))));
  });
  r.post('/campaigns/:id/pause', async (req, res) => {
    res.json(campaignOut(await automation().PauseCampaign({ id: req.params.id }, ctxOf(req, res))));
  });
  r.post('/campaigns/:id/cancel', async (req, res) => {
    res.json(campaignOut(await automation().CancelCampaign({ id: req.params.id }, ctxOf(req, res))));
  });
  r.get('/campaigns/:id/recipients', async (req, res) => {
    const { status } = parse(RecipientQuery, req.query);
    const out = await automation().ListCampaignRecipients({ campaignId: req.params.id, ...pageParams(req, 50), status }, ctxOf(req, res));
    res.json({ data: out.data.map(recipientOut), pagination: out.pagination });
  });

  r.get('/notifications', async (req, res) => {
    const out = await automation().ListNotifications(
      { ...pageParams(req, 50), unreadOnly: parse(NotificationQuery, req.query).unreadOnly },
      ctxOf(req, res),
    );
    res.json({ data: out.data.map(notificationOut), unreadCount: out.unreadCount, pagination: out.pagination });
  });
  r.post('/notifications/read-all', async (req, res) => {
    const out = await automation().MarkAllNotificationsRead({}, ctxOf(req, res));
    res.json({ message: out.message, updated: out.updated });
  });
  r.post('/notifications/:id/read', async (req, res) => {
    const out = await automation().MarkNotificationRead({ id: req.params.id }, ctxOf(req, res));
    res.json({ message: out.message });
  });

  // Appointment reminders: anyone reads the lead time, admins and owners change it (the service checks the role).
  r.get('/settings/appointments', async (req, res) => {
    res.json(await automation().GetAppointmentSettings({}, ctxOf(req, res)));
  });
  r.put('/settings/appointments', async (req, res) => {
    const b = parse(AppointmentSettings, req.body);
    res.json(await automation().UpdateAppointmentSettings(b, ctxOf(req, res)));
  });

  return { internal: r };
}
