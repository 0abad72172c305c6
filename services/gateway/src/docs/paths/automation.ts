import { z } from 'zod';
import { automationRules } from '@crm/validation';
import {
  AppointmentSettings,
  CampaignQuery,
  NewCampaign,
  ActionDoc,
  NewRule,
  NewTemplate,
  NotificationQuery,
  RecipientQuery,
  RuleQuery,
  RunQuery,
  RunRuleBody,
  ScheduleBody,
  TemplateQuery,
} from '../../routes/automation.routes';
import { nulls, reply, replyItem } from '../proto-schema';
import { emailArea } from '../../routes/email.routes';
import { area } from '../registry';
import {
  Campaign,
  CampaignBrief,
  CampaignCreated,
  Notification,
  Recipient,
  Rule,
  RuleCreated,
  Run,
  RuleSecret,
  RunStarted,
  Template,
  TemplateCreated,
} from '../schemas/automation';
import { MessageBody, page } from '../../routes/common.schemas';

/**
 * Automation rules, templates, campaigns, notifications, appointment reminders and email campaigns' settings
 * (automation), internal API; and the unsubscribe and open links every campaign email carries (no credential).
 * 503: automation could not ask identity (user ids in actions) or crm (customer lists) right now.
 */
const rules = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Automation rules' });
/** The rule body with its steps described one level deep (ActionDoc). */
const RuleBody = NewRule.extend({ actions: z.array(ActionDoc).max(automationRules.RULE_LIMITS.actions).optional() });
rules.op('GET /automation/rules', {
  summary: 'Automation rules, filtered by status, type and trigger type',
  query: RuleQuery,
  paging: { limit: 50, max: 100 },
  responses: { 200: page(Rule) },
});
rules.op('POST /automation/rules', {
  summary: 'Create a rule (a draft; automation:manage)',
  description:
    'The answer carries the rule’s signing secret for http_request steps (shown only here). 400 names the bad field by its dotted path, e.g. `actions.2.then.0.url` or `trigger.cron`; an http_request url on a private or loopback address not in AUTOMATION_ALLOWED_PRIVATE_ADDRESSES is refused.',
  body: RuleBody,
  responses: { 201: RuleCreated },
  errors: [503],
});
rules.op('GET /automation/rules/:id', { summary: 'One rule with its trigger and actions', responses: { 200: Rule } });
rules.op('PUT /automation/rules/:id', {
  summary: 'Change a rule; only the fields sent change (an active rule keeps at least one action)',
  body: RuleBody,
  responses: { 200: Rule },
  errors: [422, 503],
});
rules.op('POST /automation/rules/:id/activate', {
  summary: 'Activate a rule (its action references are checked again)',
  description: '400 names an action whose template or user is gone; 422 when the rule has no action.',
  responses: { 200: Rule },
  errors: [400, 422, 503],
});
rules.op('POST /automation/rules/:id/pause', { summary: 'Pause an active rule (422 for a draft)', responses: { 200: Rule }, errors: [422] });
rules.op('DELETE /automation/rules/:id', { summary: 'Delete a rule', responses: { 204: null } });
rules.op('GET /automation/rules/:id/runs', {
  summary: 'The rule’s run history, newest first (runs are kept 30 days after they finish)',
  description:
    'Each run with the steps it took (path, type, status, times, error). One run per rule and triggering event, however often the event is delivered. 400 names `status`, `page` or `limit` when they are not valid.',
  query: RunQuery,
  paging: { limit: 50, max: 100 },
  responses: { 200: page(Run) },
});
rules.op('POST /automation/rules/:id/run', {
  summary: 'Run an active rule now on a contact and/or conversation (automation:manage)',
  description:
    'The trigger’s conditions are not judged: a person chose to run it. Each call starts its own run, shown in the run history with trigger `manual`. 400 names `contactId` (not a contact of the org) or `conversationId`; 422 `invalid_state` unless the rule is active.',
  body: RunRuleBody,
  responses: { 202: RunStarted },
  errors: [422, 503],
});
rules.op('GET /automation/runs/:runId', {
  summary: 'One run of any rule of the org, with its steps',
  responses: { 200: Run },
});
rules.op('POST /automation/rules/:id/rotate-secret', {
  summary: 'A new signing secret for the rule’s http_request steps (automation:manage)',
  description: 'The secret is shown only in this answer and in the answer that created the rule; the previous one signs nothing from now on.',
  responses: { 200: RuleSecret },
});

const templates = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Message templates' });
templates.op('GET /automation/templates', {
  summary: 'Message templates, optionally of one category',
  query: TemplateQuery,
  responses: { 200: z.array(nulls(replyItem('automation', 'ListTemplates'), ['category'])) },
});
templates.op('POST /automation/templates', {
  summary: 'Create a template ({{placeholders}} are detected from its content)',
  body: NewTemplate,
  responses: { 201: TemplateCreated },
});
templates.op('GET /automation/templates/:id', { summary: 'One template', responses: { 200: Template } });
templates.op('PUT /automation/templates/:id', {
  summary: 'Change a template; only the fields sent change',
  body: NewTemplate,
  responses: { 200: nulls(reply('automation', 'UpdateTemplate'), ['category']) },
});
templates.op('DELETE /automation/templates/:id', {
  summary: 'Delete a template (409 while a rule or draft campaign uses it)',
  responses: { 204: null },
  errors: [409],
});

const campaigns = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Campaigns' });
campaigns.op('GET /campaigns', { summary: 'Campaigns, optionally of one status', query: CampaignQuery, responses: { 200: z.array(CampaignBrief) } });
campaigns.op('POST /campaigns', {
  summary: 'Create a draft campaign: a template sent to a customer list (campaigns:manage)',
  description:
    'Always created as a draft, whatever the channel settings: an email campaign without an email channel is refused when it is started (activate: 422 `channel_unavailable`). ' +
    'A broadcast reaches every member: one without a conversation gets one started on `chatnetAccountId` (else the account the contact last used, else the org’s most recently connected one), ' +
    'looked up by phone (paced per account like POST /api/v1/chatnet-accounts/:id/lookup); a member is `skipped` only with the reason (`error`) `not_on_network`, `no_phone` or `friend_required`.',
  body: NewCampaign,
  responses: { 201: CampaignCreated },
  errors: [503],
});
campaigns.op('GET /campaigns/:id', { summary: 'One campaign with its delivery counts', responses: { 200: Campaign } });
campaigns.op('PUT /campaigns/:id', {
  summary: 'Change a draft campaign; only the fields sent change (422 once it is not a draft)',
  body: NewCampaign,
  responses: { 200: Campaign },
  errors: [422, 503],
});
campaigns.op('POST /campaigns/:id/schedule', {
  summary: 'Set when sending starts (a draft, active or paused campaign)',
  body: ScheduleBody,
  responses: { 200: Campaign },
  errors: [422],
});
campaigns.op('POST /campaigns/:id/activate', {
  summary: 'Start (a draft) or resume (a paused) campaign',
  description:
    '422 for a completed or cancelled campaign, or when its template or list is gone; 422 `channel_unavailable` for an email campaign without an email channel.',
  responses: { 200: Campaign },
  errors: [422, 503],
});
campaigns.op('POST /campaigns/:id/pause', { summary: 'Pause an active campaign', responses: { 200: Campaign }, errors: [422] });
campaigns.op('POST /campaigns/:id/cancel', {
  summary: 'Cancel a campaign for good (recipients not reached yet are skipped)',
  responses: { 200: Campaign },
  errors: [422],
});
campaigns.op('GET /campaigns/:id/recipients', {
  summary: 'The campaign’s recipients and how each one went',
  query: RecipientQuery,
  paging: { limit: 50, max: 100 },
  responses: { 200: page(Recipient) },
});

const notifications = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Notifications' });
notifications.op('GET /notifications', {
  summary: 'The signed-in user’s notifications, newest first, with the unread count',
  query: NotificationQuery,
  paging: { limit: 50, max: 100 },
  responses: { 200: reply('automation', 'ListNotifications').extend({ data: z.array(Notification) }) },
});
notifications.op('POST /notifications/read-all', {
  summary: 'Mark every notification read',
  responses: { 200: reply('automation', 'MarkAllNotificationsRead') },
});
notifications.op('POST /notifications/:id/read', { summary: 'Mark one notification read', responses: { 200: MessageBody } });

const reminders = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Appointment reminders' });
reminders.op('GET /settings/appointments', {
  summary: 'How many minutes before an appointment its reminder is sent',
  responses: { 200: reply('automation', 'GetAppointmentSettings') },
});
reminders.op('PUT /settings/appointments', {
  summary: 'Set the reminder lead time (0 turns reminders off; admins and owners)',
  body: AppointmentSettings,
  responses: { 200: reply('automation', 'UpdateAppointmentSettings') },
});

const links = area({ prefix: '', auth: 'none', tag: 'Email links' });
links.op('GET /u/:token', {
  summary: 'The unsubscribe link of a campaign email: a page that asks to confirm (changes nothing: link scanners follow GET links)',
  responses: { 200: 'html' },
  errors: [404, 429],
});
links.op('POST /u/:token', {
  summary: "Unsubscribe: the confirmation page's button (answered with a page) or one-click (RFC 8058 List-Unsubscribe-Post)",
  responses: { 200: z.object({ unsubscribed: z.literal(true) }) },
  errors: [404, 429],
});
links.op('GET /o/:file', {
  summary: 'The open pixel of a campaign email (`<token>.gif`): the first load marks the email opened',
  responses: { 200: 'gif' },
  errors: [404, 429],
});

export const automationOps = [
  ...rules.ops,
  ...templates.ops,
  ...campaigns.ops,
  ...notifications.ops,
  ...reminders.ops,
  ...emailArea.ops,
  ...links.ops,
];
