import { randomUUID } from 'node:crypto';
import type { PoolClient } from '@crm/db';
import { eventTraceFields, eventTraceparent, isEventOf, type BatchHandler, type EventEnvelope, type ParsedEvent } from '@crm/events';
import { status as grpcStatus } from '@crm/grpc-kit';
import { isUuid } from '@crm/validation';
import type { Deps } from '../deps';
import { applyAppointmentEvent, dropContactReminders } from '../appointment-reminders';
import { applyContactMerged, applyContactMergeUndone } from '../contact-merges';
import {
  forgetLeadScore,
  inboundAlerts,
  noteMentions,
  notifications,
  recordLeadScore,
  replyOverdue,
  slaBreachAlerts,
  taskDue,
} from '../notifications';
import {
  conditionsHold,
  contactIdOf,
  type Facts,
  keywordMatches,
  needsContactLookup,
  subjectOf,
  triggerOf,
  triggersOfEvent,
} from '../rule-definitions';
import { armIdle, insertRun, RUNS_CHANNEL } from '../rules';

/**
 * Everything this consumer listens to: rule triggers, the system events that raise notifications (crm's task.due
 * among them: the assignee's task_due), and crm's contact
 * merges (rows keyed by the source contact follow it, see contact-merges/).
 */
export const TRIGGER_BINDINGS = [
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'contact.merged',
  'contact.merge_undone',
  'message.received',
  // Only to re-arm conversation_idle periods: a reply of ours ends an idle period as a customer's message does.
  'message.sent',
  'conversation.created',
  'conversation.assigned',
  'conversation.status_changed',
  'conversation.priority_changed',
  'conversation.reply_overdue',
  'conversation.sla_breached',
  'conversation.csat_received',
  'appointment.created',
  'appointment.updated',
  'appointment.deleted',
  'conversation.note_created',
  'task.created',
  'task.completed',
  'task.due',
  'message.recalled',
  'message.reaction',
  'friend_request.accepted',
  'webhook.disabled',
] as const;

export function triggersQueue(exchange: string): string {
  return `${exchange}.automation.triggers`;
}

/** The contacts rule conditions ask about, by event id: fetched from crm before the batch's transaction. */
export type TriggerContacts = Map<string, Record<string, unknown>>;

/** What a batch's preparation found: the contacts rules ask about, and the events there is nothing to do for. */
export interface TriggerPrep {
  contacts: TriggerContacts;
  idle: Set<string>;
}

/**
 * The batch's work before its transaction (issue #28 item 4): the contact of every event an active rule of its org
 * judges by contact fields, from crm, all at once. Most events have no such rule and cost nothing (the rules are in
 * memory). crm unreachable: this throws and the events are retried (EVENT_RETRY_SCHEDULE), as before.
 */
export async function prepareTriggers(deps: Deps, events: EventEnvelope[]): Promise<TriggerPrep> {
  const contacts: TriggerContacts = new Map();
  const idle = new Set<string>();
  await Promise.all(
    events.map(async (event) => {
      if (await nothingToDo(deps, event)) idle.add(event.id);
      if (!isUuid(event.orgId) || event.type === 'contact.created') return;
      const triggers = triggersOfEvent(event.type);
      if (triggers.length === 0) return;
      const rules = await deps.rules.rulesFor(event.orgId, triggers);
      if (!rules.some((r) => needsContactLookup(r.trigger_type, r.conditions))) return;
      contacts.set(event.id, await fetchContact(deps, event, contactIdOf(event.type, event.data)));
    }),
  );
  return { contacts, idle };
}

/**
 * True for an event applyTriggerEvent would write nothing for, known from memory: the ones an outreach campaign brings
 * for every lead (a conversation started, the lead's identity linked, the message sent) and a new contact (a public
 * create, a new sender) in an org with no rule listening. Those are then neither claimed nor applied (QueueShare.idle):
 * no transaction for nothing. Any other type is taken as work; a type handled here must stay in step with
 * applyTriggerEvent.
 */
async function nothingToDo(deps: Deps, event: EventEnvelope): Promise<boolean> {
  if (!isUuid(event.orgId)) return false;
  const noRules = async (triggers: readonly string[]) => (await deps.rules.rulesFor(event.orgId, triggers)).length === 0;
  if (isEventOf(event, 'message.sent')) return event.data.source === 'automation' || (await noRules(['conversation_idle']));
  if (isEventOf(event, 'conversation.created')) return noRules(triggersOfEvent(event.type));
  if (isEventOf(event, 'contact.created')) {
    // highValueLead records a new contact only when it starts at or above the threshold (most start at 0).
    const score = event.data.contact.leadScore;
    const high = Number.isFinite(score) && Math.round(score) >= deps.config.HIGH_VALUE_LEAD_SCORE;
    return !high && (await noRules(triggersOfEvent(event.type)));
  }
  if (isEventOf(event, 'contact.updated')) {
    // highValueLead judges only a score announced (a threshold, or leadScore among the changes).
    const d = event.data;
    const judged = Number.isFinite(d.contact.leadScore) && ((d.highValueThreshold ?? 0) > 0 || d.changes.includes('leadScore'));
    return !judged && (await noRules(triggersOfEvent(event.type)));
  }
  return false;
}

/**
 * Turns a batch of events into rule runs and system notifications, in the consumer's one transaction, which also
 * records the event ids: a redelivered event finds its id and does nothing, and the runs' unique key (rule, event)
 * backs that up. The actions themselves are performed by the Runner after commit.
 */
export function triggerHandler(deps: Deps): BatchHandler<TriggerPrep> {
  return async (events, db, prep) => {
    const contacts = prep?.contacts ?? new Map();
    // The inbound alerts of all the batch's messages at once (three statements, not three per recipient of each):
    // nothing else in a batch reads or writes `new_message` notifications, so doing them first changes no outcome.
    await inboundAlerts(
      events.filter((e): e is ParsedEvent<'message.received'> => isUuid(e.orgId) && isEventOf(e, 'message.received')),
      db,
    );
    // Each event's work names the event's own trace (eventTraceparent, eventTraceFields) in what it enqueues, calls and
    // logs: a batch's events may belong to different traces, and the service has no active context (main.ts).
    for (const event of events) await applyTriggerEvent(deps, event, db, contacts);
  };
}

async function applyTriggerEvent(deps: Deps, event: EventEnvelope, db: PoolClient, contacts: TriggerContacts): Promise<void> {
  if (!isUuid(event.orgId)) {
    deps.log.warn(
      { eventId: event.id, type: event.type, orgId: event.orgId, ...eventTraceFields(event) },
      'automation: event with a malformed orgId ignored',
    );
    return;
  }
  // Data parsed by its schema (parseData): a payload that does not fit was dead-lettered with the reason.
  if (!isEventOf(event, ...TRIGGER_BINDINGS)) return;
  switch (event.type) {
    case 'webhook.disabled':
      await webhookDisabled(event, db);
      return;
    case 'contact.deleted': {
      await forgetLeadScore(db, event.orgId, event.data.id);
      await dropContactReminders(db, event.orgId, event.data.id);
      return;
    }
    case 'contact.merged':
      await applyContactMerged(deps.log, event, db);
      return;
    case 'contact.merge_undone':
      await applyContactMergeUndone(deps.log, event, db);
      return;
    case 'appointment.created':
    case 'appointment.updated':
    case 'appointment.deleted':
      await applyAppointmentEvent(deps, event, db);
      break;
    case 'contact.created':
    case 'contact.updated':
      await highValueLead(deps, event, db);
      break;
    case 'conversation.note_created':
      await noteMentions(event, db);
      break;
    case 'message.received':
      // Its inbound alerts were made for the whole batch (triggerHandler).
      await armIdleTimers(deps, event, db);
      break;
    case 'message.sent':
      await armIdleTimers(deps, event, db);
      return;
    case 'task.due':
      await taskDue(event, db);
      break;
    case 'conversation.reply_overdue':
      await replyOverdue(event, db);
      break;
    case 'conversation.sla_breached':
      await slaBreachAlerts(event, db);
      break;
  }
  await startRuns(deps, event, db, contacts);
}

async function startRuns(deps: Deps, event: EventEnvelope, db: PoolClient, contacts: TriggerContacts): Promise<void> {
  const triggers = triggersOfEvent(event.type);
  if (triggers.length === 0) return;
  // From memory: most events have no rule listening, and those cost no query (issue #28 item 3).
  const rules = await deps.rules.rulesFor(event.orgId, triggers);
  if (rules.length === 0) return;
  const subject = subjectOf(event.type, event.data);
  const contactId = contactIdOf(event.type, event.data);
  const facts: Facts = { subject, contact: event.type === 'contact.created' ? subject : undefined };
  let started = 0;
  for (const rule of rules) {
    const trigger = triggerOf(rule);
    if (!keywordMatches(trigger, facts)) continue;
    if (needsContactLookup(trigger.type, trigger.conditions) && facts.contact === undefined) {
      // Fetched before the transaction; absent only when a rule changed since (the batch is retried and asks again).
      facts.contact = contacts.get(event.id);
      if (facts.contact === undefined)
        throw new Error(`a rule judging contact fields appeared after the batch was prepared (event ${event.id}); retried`);
    }
    if (!conditionsHold(trigger, facts)) continue;
    const fresh = await insertRun(db, {
      id: randomUUID(),
      orgId: event.orgId,
      ruleId: rule.id,
      eventId: event.id,
      eventType: event.type,
      contactId: contactId && isUuid(contactId) ? contactId : null,
      conversationId: conversationIdOf(event.type, subject),
      triggerType: rule.trigger_type,
      context: {
        event: { id: event.id, type: event.type, occurredAt: event.occurredAt },
        data: event.data,
        ...(facts.contact && event.type !== 'contact.created' ? { contact: facts.contact } : {}),
      },
      actions: rule.actions,
    });
    if (fresh) started++;
  }
  // Delivered at commit: the runners start the new runs at once.
  if (started > 0) await db.query(`SELECT pg_notify('${RUNS_CHANNEL}', '')`);
}

/**
 * A message starts a new idle period of its conversation for every active conversation_idle rule of the org (in the
 * batch's transaction, so exactly once per event). Messages the rules send themselves (source automation) do not: a
 * rule that writes to an idle conversation would otherwise re-arm itself and write again every `minutes`, for ever.
 */
async function armIdleTimers(deps: Deps, event: ParsedEvent<'message.received' | 'message.sent'>, db: PoolClient): Promise<void> {
  if (event.type === 'message.sent' && event.data.source === 'automation') return;
  const rules = await deps.rules.rulesFor(event.orgId, ['conversation_idle']);
  if (rules.length === 0) return;
  const { conversationId, contactId } = event.data;
  await armIdle(
    db,
    rules.flatMap((r) => {
      const idle = r.trigger_config?.idle;
      return idle
        ? [
            {
              ruleId: r.id,
              orgId: event.orgId,
              conversationId,
              contactId: contactId && isUuid(contactId) ? contactId : null,
              at: event.occurredAt,
              minutes: idle.minutes,
            },
          ]
        : [];
    }),
  );
}

/** The conversation an event is about, for the run history (the event's own conversation, when it names one). */
function conversationIdOf(eventType: string, subject: Record<string, unknown>): string | null {
  const own = eventType === 'conversation.created' ? subject.id : subject.conversationId;
  return typeof own === 'string' && isUuid(own) ? own : null;
}

/** The contact a condition asks about; one that no longer exists has no fields (its conditions fail). */
async function fetchContact(deps: Deps, event: EventEnvelope, contactId: string | undefined): Promise<Record<string, unknown>> {
  if (!contactId) return {};
  try {
    // A plain record of the brief's fields: conditions read it by name.
    const ctx = await deps.remote.actingFor(event.orgId, `automation-event:${event.id}`);
    return { ...(await deps.remote.crm().GetContactBrief({ id: contactId }, { ...ctx, traceparent: eventTraceparent(event) })) };
  } catch (err) {
    if ((err as { code?: number }).code === grpcStatus.NOT_FOUND) return {};
    // crm unreachable: the event is retried later (EVENT_RETRY_SCHEDULE) rather than judged without the contact.
    throw err;
  }
}

async function webhookDisabled(event: ParsedEvent<'webhook.disabled'>, db: PoolClient): Promise<void> {
  const d = event.data;
  await notifications.create(db, notifications.derivedId('webhook.disabled', event.id), {
    orgId: event.orgId,
    audienceRole: 'admin',
    type: 'webhook_disabled',
    title: 'Webhook endpoint disabled',
    message: `Deliveries to ${d.url || 'a webhook endpoint'} were stopped${d.reason ? `: ${d.reason}` : ''}. Fix the endpoint and re-enable it in the webhook settings.`,
    resourceId: d.webhookId,
    traceparent: eventTraceparent(event),
  });
}

/**
 * A contact whose lead score reaches the high-value threshold raises one `high_value_lead` notification (to
 * the assigned user, else to the org). Dropping below the score and crossing it again raises another.
 * The threshold is the org's own when the event carries it (crm's lead scoring sends `highValueThreshold`
 * with every score it announces), else HIGH_VALUE_LEAD_SCORE. A contact.updated without a threshold that
 * does not list leadScore in its changes says nothing new about the score, so it is not judged: judging it
 * against the env value could reset a contact crm judged high, and the next announcement would notify twice.
 */
async function highValueLead(deps: Deps, event: ParsedEvent<'contact.created' | 'contact.updated'>, db: PoolClient): Promise<void> {
  const c = event.data.contact;
  const { id, leadScore: score } = c;
  if (!Number.isFinite(score)) return;
  const threshold = event.type === 'contact.updated' ? event.data.highValueThreshold : undefined;
  const own = threshold !== undefined && threshold > 0 ? threshold : undefined;
  if (own === undefined && event.type === 'contact.updated' && !event.data.changes.includes('leadScore')) return;
  const rounded = Math.round(score);
  const high = rounded >= (own ?? deps.config.HIGH_VALUE_LEAD_SCORE);
  // A new contact below the threshold leaves nothing to record: no event of a contact is older than its creation, so a
  // "not high" row would change no later judgement (its first high score crosses either way). Most contacts start at
  // 0, so this spares three statements per created contact (issue #28: 200 public creates/s).
  if (event.type === 'contact.created' && !high) return;
  const crossed = await recordLeadScore(db, event.orgId, id, rounded, high, event.occurredAt);
  if (!crossed) return;
  const assigned = isUuid(c.assignedUserId) ? c.assignedUserId : undefined;
  const name = c.name.trim() || 'A contact';
  await notifications.create(db, notifications.derivedId('high_value_lead', event.id, id), {
    orgId: event.orgId,
    userId: assigned,
    type: 'high_value_lead',
    title: 'High-value lead',
    message: `${name} reached a lead score of ${rounded}`,
    resourceId: id,
    traceparent: eventTraceparent(event),
  });
}
