import { Router } from 'express';
import { z } from 'zod';
import { MessageBody, page } from './common.schemas';
import { responseContract } from '../http/response-contract';
import { routeArea } from '../http/route-area';
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
import {
  type Action,
  AppointmentSettings,
  Campaign,
  CampaignBrief,
  CampaignCreated,
  CampaignQuery,
  type Condition,
  NewCampaign,
  NewRule,
  NewTemplate,
  NotificationList,
  NotificationQuery,
  NotificationsRead,
  Recipient,
  RecipientQuery,
  ReminderSettings,
  Rule,
  RuleCreated,
  RuleQuery,
  RuleSecret,
  Run,
  RunQuery,
  RunRuleBody,
  RunStarted,
  ScheduleBody,
  Template,
  TemplateCreated,
  TemplateItem,
  TemplateQuery,
  type Trigger,
  UpdatedReminderSettings,
  UpdatedTemplate,
} from './automation.schemas';
import type { RouteDeps, ServiceRoutes } from './deps';

/**
 * Automation rules and their run logs, message templates, campaigns and their recipients, and in-app
 * notifications (all owned by the automation service). The shapes are checked here with the limits and enums
 * automation applies too (@crm/validation automationRules, automation.schemas.ts); what the values mean (trigger
 * types, operators, action types, ids that must exist) is checked by the service, and both name a rule's field by its
 * dotted path: `trigger.conditions.0.value`, `actions.2.then.0.url`. Served and documented from these declarations.
 * 503: automation could not ask identity (user ids in actions) or crm (customer lists) right now.
 */

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

const automation = (deps: RouteDeps) => deps.clients.automation;

export const ruleRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Automation rules' });
ruleRoutes.route('GET /automation/rules', {
  summary: 'Automation rules, filtered by status, type and trigger type',
  query: RuleQuery,
  paging: { limit: 50, max: 100 },
  response: page(Rule),
  handler: async ({ query, page, ctx, deps }) => {
    const out = await automation(deps).ListRules({ ...page, ...query }, ctx);
    return { data: out.data.map(ruleOut), pagination: out.pagination! };
  },
});
ruleRoutes.route('POST /automation/rules', {
  summary: 'Create a rule (a draft; automation:manage)',
  description:
    'The answer carries the rule’s signing secret for http_request steps (shown only here). 400 names the bad field by its dotted path, e.g. `actions.2.then.0.url` or `trigger.cron`; an http_request url on a private or loopback address not in AUTOMATION_ALLOWED_PRIVATE_ADDRESSES is refused.',
  body: NewRule,
  status: 201,
  response: RuleCreated,
  errors: [503],
  handler: async ({ body: b, ctx, deps }) =>
    ruleCreatedOut(
      await automation(deps).CreateRule({ ...b, trigger: triggerMsg(b.trigger), actions: (b.actions ?? []).map(actionMsg), setActions: true }, ctx),
    ),
});
ruleRoutes.route('GET /automation/rules/:id', {
  summary: 'One rule with its trigger and actions',
  response: Rule,
  handler: async ({ param, ctx, deps }) => ruleOut(await automation(deps).GetRule({ id: param('id') }, ctx)),
});
ruleRoutes.route('PUT /automation/rules/:id', {
  summary: 'Change a rule; only the fields sent change (an active rule keeps at least one action)',
  body: NewRule,
  response: Rule,
  errors: [422, 503],
  handler: async ({ param, body: b, ctx, deps }) => {
    const rule = await automation(deps).UpdateRule(
      { ...b, id: param('id'), trigger: triggerMsg(b.trigger), actions: (b.actions ?? []).map(actionMsg), setActions: b.actions !== undefined },
      ctx,
    );
    return ruleOut(rule);
  },
});
ruleRoutes.route('POST /automation/rules/:id/activate', {
  summary: 'Activate a rule (its action references are checked again)',
  description: '400 names an action whose template or user is gone; 422 when the rule has no action.',
  response: Rule,
  errors: [400, 422, 503],
  handler: async ({ param, ctx, deps }) => ruleOut(await automation(deps).ActivateRule({ id: param('id') }, ctx)),
});
ruleRoutes.route('POST /automation/rules/:id/pause', {
  summary: 'Pause an active rule (422 for a draft)',
  response: Rule,
  errors: [422],
  handler: async ({ param, ctx, deps }) => ruleOut(await automation(deps).PauseRule({ id: param('id') }, ctx)),
});
ruleRoutes.route('DELETE /automation/rules/:id', {
  summary: 'Delete a rule',
  status: 204,
  response: null,
  handler: async ({ param, ctx, deps }) => {
    await automation(deps).DeleteRule({ id: param('id') }, ctx);
  },
});
ruleRoutes.route('GET /automation/rules/:id/runs', {
  summary: 'The rule’s run history, newest first (runs are kept 30 days after they finish)',
  description:
    'Each run with the steps it took (path, type, status, times, error). One run per rule and triggering event, however often the event is delivered. 400 names `status`, `page` or `limit` when they are not valid.',
  query: RunQuery,
  paging: { limit: 50, max: 100 },
  response: page(Run),
  handler: async ({ param, query, page, ctx, deps }) => {
    const out = await automation(deps).ListRuleRuns({ ruleId: param('id'), ...page, status: query.status }, ctx);
    return { data: out.data.map(runOut), pagination: out.pagination! };
  },
});
ruleRoutes.route('POST /automation/rules/:id/run', {
  summary: 'Run an active rule now on a contact and/or conversation (automation:manage)',
  description:
    'The trigger’s conditions are not judged: a person chose to run it. Each call starts its own run, shown in the run history with trigger `manual`. 400 names `contactId` (not a contact of the org) or `conversationId`; 422 `invalid_state` unless the rule is active.',
  body: RunRuleBody,
  status: 202,
  response: RunStarted,
  errors: [422, 503],
  handler: async ({ param, body, ctx, deps }) => automation(deps).RunRule({ id: param('id'), ...body }, ctx),
});
ruleRoutes.route('GET /automation/runs/:runId', {
  summary: 'One run of any rule of the org, with its steps',
  response: Run,
  handler: async ({ param, ctx, deps }) => runOut(await automation(deps).GetRun({ id: param('runId') }, ctx)),
});
ruleRoutes.route('POST /automation/rules/:id/rotate-secret', {
  summary: 'A new signing secret for the rule’s http_request steps (automation:manage)',
  description: 'The secret is shown only in this answer and in the answer that created the rule; the previous one signs nothing from now on.',
  response: RuleSecret,
  handler: async ({ param, ctx, deps }) => automation(deps).RotateRuleSecret({ id: param('id') }, ctx),
});

export const templateRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Message templates' });
/** A template's body for automation: `variables` replaces the list only when sent. */
const templateMsg = (b: z.infer<typeof NewTemplate>) => ({ ...b, variables: b.variables ?? [], setVariables: b.variables !== undefined });
templateRoutes.route('GET /automation/templates', {
  summary: 'Message templates, optionally of one category',
  query: TemplateQuery,
  response: z.array(TemplateItem),
  handler: async ({ query, ctx, deps }) => (await automation(deps).ListTemplates({ category: query.category }, ctx)).data.map(templateOut),
});
templateRoutes.route('POST /automation/templates', {
  summary: 'Create a template ({{placeholders}} are detected from its content)',
  body: NewTemplate,
  indexedBody: true,
  status: 201,
  response: TemplateCreated,
  handler: async ({ body, ctx, deps }) => templateCreatedOut(await automation(deps).CreateTemplate(templateMsg(body), ctx)),
});
templateRoutes.route('GET /automation/templates/:id', {
  summary: 'One template',
  response: Template,
  handler: async ({ param, ctx, deps }) => templateOut(await automation(deps).GetTemplate({ id: param('id') }, ctx)),
});
templateRoutes.route('PUT /automation/templates/:id', {
  summary: 'Change a template; only the fields sent change',
  body: NewTemplate,
  indexedBody: true,
  response: UpdatedTemplate,
  handler: async ({ param, body, ctx, deps }) => templateOut(await automation(deps).UpdateTemplate({ ...templateMsg(body), id: param('id') }, ctx)),
});
templateRoutes.route('DELETE /automation/templates/:id', {
  summary: 'Delete a template (409 while a rule or draft campaign uses it)',
  status: 204,
  response: null,
  errors: [409],
  handler: async ({ param, ctx, deps }) => {
    await automation(deps).DeleteTemplate({ id: param('id') }, ctx);
  },
});

export const campaignRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Campaigns' });
campaignRoutes.route('GET /campaigns', {
  summary: 'Campaigns, optionally of one status',
  query: CampaignQuery,
  response: z.array(CampaignBrief),
  handler: async ({ query, ctx, deps }) => (await automation(deps).ListCampaigns({ status: query.status }, ctx)).data.map(campaignBriefOut),
});
campaignRoutes.route('POST /campaigns', {
  summary: 'Create a draft campaign: a template sent to a customer list (campaigns:manage)',
  description:
    'Always created as a draft, whatever the channel settings: an email campaign without an email channel is refused when it is started (activate: 422 `channel_unavailable`). ' +
    'A broadcast reaches every member: one without a conversation gets one started on `chatnetAccountId` (else the account the contact last used, else the org’s most recently connected one), ' +
    'looked up by phone (paced per account like POST /api/v1/chatnet-accounts/:id/lookup); a member is `skipped` only with the reason (`error`) `not_on_network`, `no_phone` or `friend_required`.',
  body: NewCampaign,
  status: 201,
  response: CampaignCreated,
  errors: [503],
  handler: async ({ body, ctx, deps }) => campaignCreatedOut(await automation(deps).CreateCampaign(campaignMsg(body), ctx)),
});
campaignRoutes.route('GET /campaigns/:id', {
  summary: 'One campaign with its delivery counts',
  response: Campaign,
  handler: async ({ param, ctx, deps }) => campaignOut(await automation(deps).GetCampaign({ id: param('id') }, ctx)),
});
campaignRoutes.route('PUT /campaigns/:id', {
  summary: 'Change a draft campaign; only the fields sent change (422 once it is not a draft)',
  body: NewCampaign,
  response: Campaign,
  errors: [422, 503],
  handler: async ({ param, body, ctx, deps }) => campaignOut(await automation(deps).UpdateCampaign({ ...campaignMsg(body), id: param('id') }, ctx)),
});
campaignRoutes.route('POST /campaigns/:id/schedule', {
  summary: 'Set when sending starts (a draft, active or paused campaign)',
  body: ScheduleBody,
  response: Campaign,
  errors: [422],
  handler: async ({ param, body, ctx, deps }) =>
    campaignOut(await automation(deps).ScheduleCampaign({ id: param('id'), schedule: body.schedule ?? '' }, ctx)),
});
campaignRoutes.route('POST /campaigns/:id/activate', {
  summary: 'Start (a draft) or resume (a paused) campaign',
  description:
    '422 for a completed or cancelled campaign, or when its template or list is gone; 422 `channel_unavailable` for an email campaign without an email channel.',
  response: Campaign,
  errors: [422, 503],
  handler: async ({ param, ctx, deps }) => campaignOut(await automation(deps).ActivateCampaign({ id: param('id') }, ctx)),
});
campaignRoutes.route('POST /campaigns/:id/pause', {
  summary: 'Pause an active campaign',
  response: Campaign,
  errors: [422],
  handler: async ({ param, ctx, deps }) => campaignOut(await automation(deps).PauseCampaign({ id: param('id') }, ctx)),
});
campaignRoutes.route('POST /campaigns/:id/cancel', {
  summary: 'Cancel a campaign for good (recipients not reached yet are skipped)',
  response: Campaign,
  errors: [422],
  handler: async ({ param, ctx, deps }) => campaignOut(await automation(deps).CancelCampaign({ id: param('id') }, ctx)),
});
campaignRoutes.route('GET /campaigns/:id/recipients', {
  summary: 'The campaign’s recipients and how each one went',
  query: RecipientQuery,
  paging: { limit: 50, max: 100 },
  response: page(Recipient),
  handler: async ({ param, query, page, ctx, deps }) => {
    const out = await automation(deps).ListCampaignRecipients({ campaignId: param('id'), ...page, status: query.status }, ctx);
    return { data: out.data.map(recipientOut), pagination: out.pagination! };
  },
});

export const notificationRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Notifications' });
notificationRoutes.route('GET /notifications', {
  summary: 'The signed-in user’s notifications, newest first, with the unread count',
  query: NotificationQuery,
  paging: { limit: 50, max: 100 },
  response: NotificationList,
  handler: async ({ query, page, ctx, deps }) => {
    const out = await automation(deps).ListNotifications({ ...page, unreadOnly: query.unreadOnly }, ctx);
    return { data: out.data.map(notificationOut), unreadCount: out.unreadCount, pagination: out.pagination };
  },
});
notificationRoutes.route('POST /notifications/read-all', {
  summary: 'Mark every notification read',
  response: NotificationsRead,
  handler: async ({ ctx, deps }) => {
    const out = await automation(deps).MarkAllNotificationsRead({}, ctx);
    return { message: out.message, updated: out.updated };
  },
});
notificationRoutes.route('POST /notifications/:id/read', {
  summary: 'Mark one notification read',
  response: MessageBody,
  handler: async ({ param, ctx, deps }) => ({ message: (await automation(deps).MarkNotificationRead({ id: param('id') }, ctx)).message }),
});

// Appointment reminders: anyone reads the lead time, admins and owners change it (the service checks the role).
export const reminderRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Appointment reminders' });
reminderRoutes.route('GET /settings/appointments', {
  summary: 'How many minutes before an appointment its reminder is sent',
  response: ReminderSettings,
  handler: async ({ ctx, deps }) => automation(deps).GetAppointmentSettings({}, ctx),
});
reminderRoutes.route('PUT /settings/appointments', {
  summary: 'Set the reminder lead time (0 turns reminders off; admins and owners)',
  body: AppointmentSettings,
  response: UpdatedReminderSettings,
  handler: async ({ body, ctx, deps }) => automation(deps).UpdateAppointmentSettings(body, ctx),
});

/** The areas in the document's order (email campaigns' settings and links follow them: email.routes.ts). */
export const automationAreas = [ruleRoutes, templateRoutes, campaignRoutes, notificationRoutes, reminderRoutes];

export function automationRoutes(deps: RouteDeps): ServiceRoutes {
  const contract = responseContract(deps.config);
  return { internal: Router().use(...automationAreas.map((area) => area.router(deps, contract))) };
}
