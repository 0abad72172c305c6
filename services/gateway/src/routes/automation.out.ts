import type { z } from 'zod';
import type { automation } from '@crm/proto-types';
import { orNull } from '../http/shape';
import type {
  ActionDoc,
  Campaign as CampaignOut,
  CampaignBrief,
  CampaignCreated,
  Notification as NotificationOut,
  Recipient as RecipientOut,
  Rule as RuleOut,
  RuleCreated,
  Run as RunOut,
  Template as TemplateOut,
  TemplateCreated,
} from './automation.schemas';

type Rule = automation.Rule__Output;
type Run = automation.Run__Output;
type Template = automation.Template__Output;
type Campaign = automation.Campaign__Output;
type Recipient = automation.Recipient__Output;
type Notification = automation.Notification__Output;

type Action = automation.Action__Output;
type RuleStatus = z.input<typeof RuleOut>['status'];
type StepOut = z.input<typeof RunOut>['steps'][number];
type CampaignType = z.input<typeof CampaignOut>['type'];
type CampaignStatus = z.input<typeof CampaignOut>['status'];
type Condition = automation.Condition__Output;

const conditionOut = (c: Condition) => ({ field: c.field, operator: c.operator, value: JSON.parse(c.valueJson) as unknown });

/**
 * One action as it was written: optional fields are absent when unset (proto3 optional), the lists and map only an if
 * or an http_request has are left out elsewhere, set_priority's "" is a cleared priority (null as it was written).
 */
export function actionOut(a: Action): z.input<typeof ActionDoc> & { type: string } {
  const { conditions, then, else: otherwise, headers, ...rest } = a;
  if (a.type === 'if') return { type: a.type, conditions: conditions.map(conditionOut), then: then.map(actionOut), else: otherwise.map(actionOut) };
  if (a.type === 'http_request') return { ...rest, headers };
  if (a.type === 'set_priority') return { ...rest, priority: a.priority || null };
  return rest;
}

/** The Automation rule resource: condition values back to JSON values, keywords only where they mean something. */
export function ruleOut(r: Rule): z.input<typeof RuleOut> {
  // A message field decodes as null when unset; automation always sets a rule's trigger.
  const trigger = r.trigger ?? { type: '', conditions: [], keywords: [] };
  return {
    id: r.id,
    name: r.name,
    description: orNull(r.description),
    type: r.type,
    trigger: {
      type: trigger.type,
      conditions: trigger.conditions.map(conditionOut),
      ...(trigger.type === 'keyword' ? { keywords: trigger.keywords } : {}),
      // schedule: when and for whom; conversation_idle: how long and in which status.
      ...(trigger.type === 'schedule' ? { cron: trigger.cron ?? '', timezone: trigger.timezone ?? '', listId: trigger.listId ?? null } : {}),
      ...(trigger.type === 'conversation_idle' ? { minutes: trigger.minutes ?? 0, status: trigger.status ?? null } : {}),
    },
    actions: r.actions.map(actionOut),
    status: r.status as RuleStatus,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    runCount: r.runCount,
    lastRunAt: r.lastRunAt ?? null,
  };
}

/** The rule just created, with its signing secret: the one time it is shown (rotate-secret gives a new one). */
export function ruleCreatedOut(r: Rule): z.input<typeof RuleCreated> {
  return { id: r.id, name: r.name, status: r.status as RuleStatus, createdAt: r.createdAt, secret: r.secret ?? '' };
}

/** One run of a rule: unset values as null; each step with the path of the action it was. */
export function runOut(r: Run): z.input<typeof RunOut> {
  return {
    id: r.id,
    ruleId: r.ruleId,
    trigger: r.trigger,
    eventId: r.eventId,
    eventType: r.eventType,
    contactId: orNull(r.contactId),
    conversationId: orNull(r.conversationId),
    status: r.status as z.input<typeof RunOut>['status'],
    steps: r.steps.map((st) => ({
      path: st.path,
      type: st.type,
      status: st.status as StepOut['status'],
      ...(st.branch ? { branch: st.branch as StepOut['branch'] } : {}),
      startedAt: st.startedAt,
      finishedAt: st.finishedAt ?? null,
      error: orNull(st.error),
    })),
    startedAt: r.startedAt,
    actionsDone: r.actionsDone,
    totalActions: r.totalActions,
    error: orNull(r.error),
    attempts: r.attempts,
    resumeAt: r.resumeAt ?? null,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    finishedAt: r.finishedAt ?? null,
  };
}

/** A message template: no category is null. */
export function templateOut(t: Template): z.input<typeof TemplateOut> {
  return {
    id: t.id,
    name: t.name,
    content: t.content,
    category: orNull(t.category),
    variables: t.variables,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
  };
}

export function templateCreatedOut(t: Template): z.input<typeof TemplateCreated> {
  return { id: t.id, name: t.name, createdAt: t.createdAt };
}

/** The Campaign resource: variables back to an object, absent times as null. */
export function campaignOut(c: Campaign): z.input<typeof CampaignOut> {
  return {
    id: c.id,
    name: c.name,
    description: orNull(c.description),
    type: c.type as CampaignType,
    listId: c.listId,
    templateId: c.templateId,
    subject: orNull(c.subject),
    chatnetAccountId: c.chatnetAccountId ?? null,
    schedule: c.schedule ?? null,
    variables: JSON.parse(c.variablesJson || '{}') as Record<string, unknown>,
    status: c.status as CampaignStatus,
    contactCount: c.contactCount,
    sentCount: c.sentCount,
    openRate: c.openRate,
    replyRate: c.replyRate,
    counts: c.counts,
    recipientsReady: c.recipientsReady,
    lastError: orNull(c.lastError),
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
    activatedAt: c.activatedAt ?? null,
    completedAt: c.completedAt ?? null,
    cancelledAt: c.cancelledAt ?? null,
  };
}

/** A campaign in the list: the figures a table shows. */
export function campaignBriefOut(c: Campaign): z.input<typeof CampaignBrief> {
  return {
    id: c.id,
    name: c.name,
    type: c.type as CampaignType,
    status: c.status as CampaignStatus,
    contactCount: c.contactCount,
    sentCount: c.sentCount,
    openRate: c.openRate,
    createdAt: c.createdAt,
  };
}

export function campaignCreatedOut(c: Campaign): z.input<typeof CampaignCreated> {
  return { id: c.id, name: c.name, status: c.status as CampaignStatus, createdAt: c.createdAt };
}

/** A campaign's recipient: unset values as null (a contact without a phone or an email address too). */
export function recipientOut(r: Recipient): z.input<typeof RecipientOut> {
  return {
    contactId: r.contactId,
    name: r.name,
    phone: orNull(r.phone),
    email: orNull(r.email),
    status: r.status,
    error: orNull(r.error),
    attempts: r.attempts,
    conversationId: orNull(r.conversationId),
    messageId: orNull(r.messageId),
    sentAt: r.sentAt ?? null,
    repliedAt: r.repliedAt ?? null,
    nextAttemptAt: r.nextAttemptAt ?? null,
    updatedAt: r.updatedAt,
    seenAt: r.seenAt ?? null,
  };
}

/** An in-app notification: no resource (a notification about nothing in particular) is null. */
export function notificationOut(n: Notification): z.input<typeof NotificationOut> {
  return { id: n.id, type: n.type, title: n.title, message: n.message, resourceId: orNull(n.resourceId), read: n.read, createdAt: n.createdAt };
}
