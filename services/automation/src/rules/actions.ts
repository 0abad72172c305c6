import { AppError, status as grpcStatus } from '@crm/grpc-kit';
import type { messaging } from '@crm/proto-types';
import type { Deps } from '../deps';
import type { RunContext, RunRow } from './runs.repo';
import { getTemplate } from '../templates';
import { isUuid } from '@crm/validation';
import {
  ActionDef,
  CONVERSATION_ASSIGNEE,
  holds,
  type RuleState,
  STEP_FIELD,
  subjectOf,
  subjectPrefixOf,
  triggersOfEvent,
  type TriggerType,
  valueOf,
  waitSeconds,
} from '../rule-definitions';
import { HttpStepError } from '../http-step';
import { notifications } from '../notifications';
import { placeholdersOf, render } from '../text';

/**
 * Performing one action of a run. Every action is safe to perform twice (a run resumed after a crash
 * repeats the action it was in): messages carry a clientMessageId derived from (rule, event, action
 * index) that messaging de-duplicates, notifications an id derived from (run, action index), and tags and
 * assignment are idempotent by nature.
 */

/** Why an action did not succeed; transient ones are retried on the run retry schedule. */
export class ActionFailure extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
  }
}

const TRANSIENT_CODES = new Set<number>([
  grpcStatus.UNAVAILABLE,
  grpcStatus.DEADLINE_EXCEEDED,
  grpcStatus.RESOURCE_EXHAUSTED,
  grpcStatus.ABORTED,
  grpcStatus.INTERNAL,
  grpcStatus.UNKNOWN,
  // e.g. the chat account is not connected right now: it may be by the next attempt.
  grpcStatus.FAILED_PRECONDITION,
]);

/** Turn whatever a remote call threw into an ActionFailure: transient, or a reason to give up. */
export function classify(err: unknown, what: string): ActionFailure {
  if (err instanceof ActionFailure) return err;
  if (err instanceof AppError) return new ActionFailure(err.message, err.kind === 'unavailable');
  const e = err as { code?: unknown; details?: string; message?: string };
  if (typeof e?.code === 'number') {
    return new ActionFailure(`${what}: ${e.details || e.message || 'failed'}`, TRANSIENT_CODES.has(e.code));
  }
  // Database hiccups and the like: try again later.
  return new ActionFailure(`${what}: ${e?.message ?? String(err)}`, true);
}

const permanent = (message: string) => new ActionFailure(message, false);

/** The trigger of a run started by hand (POST /automation/rules/:id/run), and its event type. */
export const MANUAL_TRIGGER = 'manual';
export const MANUAL_EVENT = 'automation.manual';

/** The additional data a rule's secret is encrypted with: it decrypts only as this org's and this rule's. */
export const ruleSecretAad = (orgId: string, ruleId: string) => `automation-rule-secret:${orgId}:${ruleId}`;

/** Variables that come from the contact record; a template using one makes the run fetch the contact. */
const CONTACT_VARIABLES = new Set(['name', 'phone', 'email', 'status', 'tags']);

function display(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (Array.isArray(v)) return v.map(String).join(', ');
  if (typeof v === 'object') return undefined;
  return String(v);
}

/** What one run needs while performing its actions: the rule, the event, the contact once fetched. */
export class RunScope {
  context: RunContext;
  /** The context gained something (the contact) that should be saved with the next progress write. */
  contextChanged = false;
  readonly subject: Record<string, unknown>;
  readonly prefix: string;

  readonly ruleName: string;
  /** The trigger type conditions of if steps are judged by (runs older than the column: the event's first). */
  readonly trigger: TriggerType;

  constructor(
    private readonly deps: Deps,
    readonly run: RunRow,
    private readonly rule: RuleState,
  ) {
    this.ruleName = rule.name;
    this.context = run.context;
    this.subject = subjectOf(run.event_type, run.context.data);
    this.prefix = subjectPrefixOf(run.event_type);
    this.trigger = (run.trigger_type || triggersOfEvent(run.event_type)[0]) as TriggerType;
  }

  /** steps.<n>.status / steps.<n>.body.<field>…: the answer of the run's nth step (an http_request), if it had one. */
  stepValue(name: string): unknown {
    const m = STEP_FIELD.exec(name);
    if (!m) return undefined;
    const answer = this.context.answers?.[m[1]];
    if (!answer) return undefined;
    if (m[2] === 'status') return answer.status;
    let v: unknown = answer.body;
    for (const key of m[2].split('.').slice(1)) {
      if (v === null || typeof v !== 'object') return undefined;
      v = (v as Record<string, unknown>)[key];
    }
    return v;
  }

  /** The context of the run's calls: the org's grant vouches for it (remote.actingFor). */
  private sys() {
    return this.deps.remote.actingFor(this.run.org_id, `automation-run:${this.run.id}`);
  }

  private async contact(): Promise<Record<string, unknown>> {
    if (this.context.contact) return this.context.contact;
    if (this.run.event_type === 'contact.created') return this.subject;
    if (!this.run.contact_id) return {};
    let brief: Record<string, unknown>;
    try {
      // A plain record of the brief's fields: templates and conditions read it by name.
      brief = { ...(await this.deps.remote.crm().GetContactBrief({ id: this.run.contact_id }, await this.sys())) };
    } catch (err) {
      if ((err as { code?: number }).code === grpcStatus.NOT_FOUND) throw permanent('Contact not found (deleted?)');
      throw classify(err, 'crm GetContactBrief');
    }
    this.context = { ...this.context, contact: brief };
    this.contextChanged = true;
    return brief;
  }

  /** Render a text: contact variables (name, phone, email, status, tags, contact.*), then the event's own fields. */
  async render(text: string): Promise<string> {
    const names = placeholdersOf(text);
    const needsContact = names.some((n) => CONTACT_VARIABLES.has(n) || n.startsWith('contact.'));
    const contact = needsContact ? await this.contact() : {};
    const s = this.subject;
    return render(text, (name) => {
      if (name.startsWith('steps.')) {
        const v = this.stepValue(name);
        // A JSON value (an object, an array) is written as JSON, so a body template can pass it on.
        return v !== null && typeof v === 'object' ? JSON.stringify(v) : display(v);
      }
      if (name.startsWith('contact.')) return display(contact[name.slice('contact.'.length)]);
      if (CONTACT_VARIABLES.has(name)) {
        // A chat contact may have no name yet; the name they chat under is the next best thing.
        return display(contact[name]) || (name === 'name' ? display(s.senderName) : undefined);
      }
      if (name.startsWith(`${this.prefix}.`)) return display(s[name.slice(this.prefix.length + 1)]);
      if (this.prefix === 'message' && name === 'message') return display(s.content);
      return display(s[name]);
    });
  }

  async templateText(a: { template?: string; templateId?: string }): Promise<string> {
    const id = a.templateId ?? (a.template && isUuid(a.template) ? a.template : undefined);
    if (!id) return a.template ?? '';
    const t = await getTemplate(this.deps.pool, this.run.org_id, id);
    if (!t) throw permanent(`Template ${id} no longer exists`);
    return t.content;
  }

  private contactId(): string {
    if (!this.run.contact_id) throw permanent('The event concerns no contact');
    return this.run.contact_id;
  }

  /** The conversation the event is about, if it is about one. */
  private eventConversationId(): string | undefined {
    if (
      (this.prefix === 'message' || this.prefix === 'note' || this.prefix === 'task' || this.prefix === 'csat') &&
      typeof this.subject.conversationId === 'string'
    )
      return this.subject.conversationId;
    if (this.prefix === 'conversation' && typeof this.subject.id === 'string') return this.subject.id;
    // conversation.assigned / conversation.status_changed name their conversation conversationId.
    if (this.prefix === 'conversation' && typeof this.subject.conversationId === 'string') return this.subject.conversationId;
    // A run started by hand, on the conversation the person named.
    if (this.run.trigger_type === MANUAL_TRIGGER && typeof this.subject.conversationId === 'string') return this.subject.conversationId;
    return undefined;
  }

  /** The conversation to act on (send into, assign): the event's own, else the contact's latest. */
  private async conversationId(): Promise<string> {
    const own = this.eventConversationId();
    if (own) return own;
    let res: messaging.LatestConversation__Output;
    try {
      res = await this.deps.remote.messaging().LatestConversationForContact({ contactId: this.contactId() }, await this.sys());
    } catch (err) {
      throw classify(err, 'messaging LatestConversationForContact');
    }
    if (!res.conversation?.id) throw permanent('The contact has no conversation to send into');
    return res.conversation.id;
  }

  /**
   * create_task: a task in crm on the event's contact and conversation (when it has them), due dueInMinutes after
   * now, for the named user or the conversation's assignee (none assigned: an unassigned task). Its id derives from
   * (run, action index), so a repeated attempt gets the task made the first time.
   */
  private async createTask(index: number, action: Extract<ActionDef, { type: 'create_task' }>): Promise<void> {
    const title = (await this.render(action.title)).trim() || action.title;
    let conversationId = this.eventConversationId();
    let assigneeId: string | undefined;
    if (action.assignTo === CONVERSATION_ASSIGNEE) {
      conversationId ??= await this.conversationId();
      try {
        const res = await this.deps.remote.messaging().GetConversation({ id: conversationId, page: 1, limit: 1 }, await this.sys());
        assigneeId = res.conversation?.assigneeId || undefined;
      } catch (err) {
        if ((err as { code?: number }).code === grpcStatus.NOT_FOUND) throw permanent('Conversation not found (deleted?)');
        throw classify(err, 'messaging GetConversation');
      }
    } else if (action.assignTo) assigneeId = action.assignTo;
    const dueAt = action.dueInMinutes === undefined ? undefined : new Date(Date.now() + action.dueInMinutes * 60_000).toISOString();
    try {
      await this.deps.remote.crmTasks().CreateTask(
        {
          id: notifications.derivedId('create_task', this.run.id, String(index)),
          title: title.slice(0, 200),
          dueAt,
          assigneeId,
          contactId: this.run.contact_id ?? undefined,
          conversationId,
        },
        await this.sys(),
      );
    } catch (err) {
      if ((err as { code?: number }).code === grpcStatus.NOT_FOUND) throw permanent('The task’s contact or conversation no longer exists');
      throw classify(err, 'crm CreateTask');
    }
  }

  /** An if step: do all its conditions hold (the trigger's fields, the contact, earlier steps' answers)? */
  private async conditionsHold(action: Extract<ActionDef, { type: 'if' }>): Promise<boolean> {
    const needsContact = action.conditions.some((c) => c.field.startsWith('contact.'));
    const facts = { subject: this.subject, contact: needsContact ? await this.contact() : undefined };
    return action.conditions.every((c) => holds(c, c.field.startsWith('steps.') ? this.stepValue(c.field) : valueOf(this.trigger, facts, c.field)));
  }

  /**
   * An http_request step: the rendered body, signed with the rule's secret, through the SSRF guard; the answer (any
   * status: later steps branch on it) is kept as steps.<stepIndex>. No answer (refused address, no connection, no
   * answer within 10 s): a refusal fails the run, the rest are retried on the run retry schedule. The webhook-id is
   * the same on every attempt of the step, so a receiver can tell a retry from a new request.
   */
  private async httpRequest(index: number, action: Extract<ActionDef, { type: 'http_request' }>, stepIndex: number): Promise<void> {
    if (!this.rule.secret_enc) throw permanent('The rule has no signing secret; give it one with POST /api/v1/automation/rules/:id/rotate-secret');
    const secret = this.deps.box.decrypt(this.rule.secret_enc, ruleSecretAad(this.run.org_id, this.rule.id));
    const body = action.bodyTemplate === undefined ? undefined : await this.render(action.bodyTemplate);
    let answer: { status: number; body: unknown };
    try {
      answer = await this.deps.httpSteps.send({
        url: action.url,
        method: action.method,
        headers: action.headers,
        body,
        id: notifications.derivedId('http_request', this.run.id, String(index)),
        secret,
      });
    } catch (err) {
      if (err instanceof HttpStepError) throw new ActionFailure(err.message, !err.refused);
      throw err;
    }
    this.context = { ...this.context, answers: { ...this.context.answers, [String(stepIndex)]: answer } };
    this.contextChanged = true;
  }

  /**
   * Perform step `index` of the run's program, the run's step number `stepIndex`: a wait returns the time to resume
   * at, an if whether its conditions hold.
   */
  async perform(index: number, action: ActionDef, stepIndex: number): Promise<{ waitUntil?: Date; holds?: boolean }> {
    switch (action.type) {
      case 'if':
        return { holds: await this.conditionsHold(action) };
      case 'http_request':
        await this.httpRequest(index, action, stepIndex);
        return {};
      case 'send_message': {
        const content = (await this.render(await this.templateText(action))).trim();
        if (!content) throw permanent('The rendered message is empty');
        const conversationId = await this.conversationId();
        const clientMessageId = notifications.derivedId('send_message', this.run.rule_id, this.run.event_id, String(index));
        try {
          await this.deps.remote
            .messaging()
            .SendMessage({ conversationId, content, contentType: 'text', clientMessageId, source: 'automation' }, await this.sys());
        } catch (err) {
          throw classify(err, 'messaging SendMessage');
        }
        return {};
      }
      case 'send_notification': {
        const body = action.template || action.templateId ? await this.templateText(action) : (action.message ?? '');
        const message = (await this.render(body)).trim();
        const title = (await this.render(action.title ?? this.ruleName)).trim() || this.ruleName;
        const resource = this.run.contact_id ?? (typeof this.subject.id === 'string' ? this.subject.id : '');
        await notifications.createNow(this.deps, notifications.derivedId('send_notification', this.run.id, String(index)), {
          orgId: this.run.org_id,
          userId: action.userId,
          type: action.notificationType ?? 'automation',
          title,
          message,
          resourceId: resource,
          // A run is taken from its table by the runner's loop, with no trace to continue (rule_runs keeps none).
          traceparent: undefined,
        });
        return {};
      }
      case 'assign_user':
      case 'add_tag': {
        const patch =
          action.type === 'assign_user'
            ? { id: this.contactId(), assignedUserId: action.userId, addTags: [] }
            : { id: this.contactId(), addTags: [action.tag] };
        try {
          await this.deps.remote.crm().PatchContact(patch, await this.sys());
        } catch (err) {
          if ((err as { code?: number }).code === grpcStatus.NOT_FOUND) throw permanent('Contact not found (deleted?)');
          throw classify(err, 'crm PatchContact');
        }
        return {};
      }
      case 'assign_round_robin': {
        // The event's conversation (or the contact's latest) gets the next person of its account's rotation;
        // one already assigned stays so, which makes a repeated attempt harmless.
        const conversationId = await this.conversationId();
        try {
          await this.deps.remote.messaging().AssignRoundRobin({ conversationId }, await this.sys());
        } catch (err) {
          if ((err as { code?: number }).code === grpcStatus.NOT_FOUND) throw permanent('Conversation not found (deleted?)');
          throw classify(err, 'messaging AssignRoundRobin');
        }
        return {};
      }
      case 'create_task':
        await this.createTask(index, action);
        return {};
      case 'set_priority': {
        // The event's conversation (or the contact's latest); setting the priority it has changes nothing, so a
        // repeated attempt is harmless and a rule on conversation_priority_changed cannot start itself again.
        const conversationId = await this.conversationId();
        try {
          await this.deps.remote.messaging().SetConversationPriority({ id: conversationId, priority: action.priority ?? '' }, await this.sys());
        } catch (err) {
          if ((err as { code?: number }).code === grpcStatus.NOT_FOUND) throw permanent('Conversation not found (deleted?)');
          throw classify(err, 'messaging SetConversationPriority');
        }
        return {};
      }
      case 'wait':
        return { waitUntil: new Date(Date.now() + waitSeconds(action) * 1000) };
    }
  }
}
