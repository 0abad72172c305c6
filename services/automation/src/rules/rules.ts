import { randomUUID } from 'node:crypto';
import { type Queryable, withTransaction } from '@crm/db';
import { recordAudit } from '@crm/events';
import { AppError, invalid, notFound, requireCan, requireUser, status, OrgContext } from '@crm/grpc-kit';
import { automationRules as rules, isUuid, optionalOneOf } from '@crm/validation';
import type { automation } from '@crm/proto-types';
import type { Deps } from '../deps';
import * as runs from './runs.repo';
import { existingTemplateIds } from '../templates';
import { MANUAL_EVENT, MANUAL_TRIGGER, ruleSecretAad } from './actions';
import { findList } from '../lists';
import { generateSecret } from '../http-step';
import { syncRuleTimers } from './trigger-timers';
import {
  ActionDef,
  checkActionsFitTrigger,
  referencesOf,
  ruleIncomplete,
  rulesRepo as repo,
  stepsOf,
  type TriggerDef,
  validateActions,
  validateDescription,
  validateName,
  validateRuleType,
  validateTrigger,
} from '../rule-definitions';

/** A rule as CreateRule and UpdateRule receive it (the decoded `automation.v1.RuleInput`). */
export type RuleInput = automation.RuleInput__Output;

function pageOf(req: { page?: number; limit?: number }) {
  return { page: Math.max(1, req.page || 1), limit: Math.min(100, Math.max(1, req.limit || 50)) };
}

async function load(deps: Deps, orgId: string, id: string) {
  const row = isUuid(id) ? await repo.getRule(deps.pool, orgId, id.toLowerCase()) : undefined;
  if (!row) throw notFound('Automation rule');
  return row;
}

/**
 * Ids in actions must exist in the caller's org: templates here, users through identity (asked with the
 * caller's own context, so another org's user is simply not found).
 */
async function checkReferences(deps: Deps, ctx: OrgContext, actions: ActionDef[]): Promise<void> {
  const refs = referencesOf(actions);
  const found = await existingTemplateIds(deps.pool, ctx.orgId, [...new Set(refs.templates.map((t) => t.id))]);
  const missingTemplate = refs.templates.find((t) => !found.has(t.id));
  if (missingTemplate) throw invalid(missingTemplate.path, `no template ${missingTemplate.id} in this organization`);
  const checked = new Map<string, Promise<void>>();
  const checkUser = (id: string, path: string) =>
    deps.remote
      .identity()
      .GetUser({ id }, ctx)
      .then(
        (u) => {
          if (u.status !== 'active') throw invalid(path, `user ${id} is inactive`);
        },
        (err: { code?: number }) => {
          if (err.code === status.NOT_FOUND) throw invalid(path, `no user ${id} in this organization`);
          throw new AppError('unavailable', 'Cannot check user ids right now (identity service unavailable); try again shortly');
        },
      );
  for (const u of refs.users) {
    if (!checked.has(u.id)) checked.set(u.id, checkUser(u.id, u.path));
  }
  // In action order, so the 400 names the first bad field.
  for (const u of refs.users) await checked.get(u.id);
  await checkHttpTargets(deps, actions);
}

/**
 * The SSRF guard judges an http_request step's host when the rule is saved (a private or loopback address not in
 * AUTOMATION_ALLOWED_PRIVATE_ADDRESSES: 400 naming the step's url), and again on every request, where it really holds.
 */
async function checkHttpTargets(deps: Deps, actions: ActionDef[]): Promise<void> {
  for (const { action, path } of stepsOf(actions)) {
    if (action.type !== 'http_request') continue;
    const verdict = await deps.httpSteps.guard.checkOnSave(new URL(action.url).hostname.replace(/^\[|\]$/g, ''), 2_000);
    if ('refused' in verdict) throw invalid(`${path}.url`, verdict.refused);
  }
}

/** A schedule trigger's listId must be a customer list of the caller's org (asked of crm as the caller: another org's is not found). */
async function checkTriggerReferences(deps: Deps, ctx: OrgContext, trigger: TriggerDef | undefined): Promise<void> {
  const listId = trigger?.schedule?.listId;
  if (!listId) return;
  if (!(await findList(deps, ctx, listId))) throw invalid('trigger.listId', `no customer list ${listId} in this organization`);
}

/** The rule as written, and its schedule row and idle periods brought in line with it, in the caller's transaction. */
async function syncTimers(db: Queryable, orgId: string, id: string): Promise<void> {
  const row = await repo.getRuleForUpdate(db, orgId, id);
  if (row) await syncRuleTimers(db, row);
}

async function newSecret(deps: Deps, orgId: string, ruleId: string): Promise<{ secret: string; secretEnc: string }> {
  const secret = generateSecret();
  return { secret, secretEnc: deps.box.encrypt(secret, ruleSecretAad(orgId, ruleId)) };
}

export async function list(
  deps: Deps,
  ctx: OrgContext,
  req: { page?: number; limit?: number; status?: string; type?: string; triggerType?: string },
) {
  const { orgId } = requireUser(ctx);
  optionalOneOf(req.status, rules.RULE_STATUSES, 'status');
  return repo.listRules(deps.pool, orgId, {
    ...pageOf(req),
    status: req.status || undefined,
    type: req.type?.trim() || undefined,
    triggerType: req.triggerType || undefined,
  });
}

export async function get(deps: Deps, ctx: OrgContext, id: string) {
  const { orgId } = requireUser(ctx);
  return repo.toRule(await load(deps, orgId, id));
}

export async function create(deps: Deps, ctx: OrgContext, input: RuleInput) {
  const { orgId, userId } = requireUser(ctx);
  requireCan(ctx, 'automation:manage');
  const name = validateName(input.name);
  const description = validateDescription(input.description);
  const type = validateRuleType(input.type);
  const trigger = validateTrigger(input.trigger);
  const actions = validateActions(input.actions ?? [], trigger.type);
  checkActionsFitTrigger(trigger.type, actions);
  await checkTriggerReferences(deps, ctx, trigger);
  await checkReferences(deps, ctx, actions);
  const id = randomUUID();
  // Every rule gets its signing secret at birth, shown this once (rotate-secret gives a new one).
  const { secret, secretEnc } = await newSecret(deps, orgId, id);
  // A new rule is a draft: nothing to time yet.
  await repo.insertRule(deps.pool, { id, orgId, name, description, type, trigger, actions, createdBy: userId, secretEnc });
  // Committed: the next event of the org is judged with it (other replicas hear of it by NOTIFY).
  deps.rules.changed(orgId);
  return { ...repo.toRule((await repo.getRule(deps.pool, orgId, id))!), secret };
}

export async function update(deps: Deps, ctx: OrgContext, input: RuleInput) {
  const { orgId } = requireUser(ctx);
  requireCan(ctx, 'automation:manage');
  const current = await load(deps, orgId, input.id);
  const patch: repo.RulePatch = {
    name: input.name !== undefined ? validateName(input.name) : undefined,
    description: input.description !== undefined ? validateDescription(input.description) : undefined,
    type: input.type !== undefined ? validateRuleType(input.type) : undefined,
    trigger: input.trigger ? validateTrigger(input.trigger) : undefined,
  };
  // if steps are judged by the trigger the rule will have.
  if (input.setActions) patch.actions = validateActions(input.actions ?? [], patch.trigger?.type ?? current.trigger_type);
  checkActionsFitTrigger(patch.trigger?.type ?? current.trigger_type, patch.actions ?? current.actions);
  await checkTriggerReferences(deps, ctx, patch.trigger);
  if (patch.actions) {
    await checkReferences(deps, ctx, patch.actions);
    // An active rule must keep doing something; pause it first to empty it.
    if (patch.actions.length === 0 && current.status === 'active') throw ruleIncomplete();
  }
  await withTransaction(deps.pool, async (tx) => {
    await repo.updateRule(tx, orgId, current.id, patch);
    await syncTimers(tx, orgId, current.id);
  });
  deps.rules.changed(orgId);
  return repo.toRule((await repo.getRule(deps.pool, orgId, current.id))!);
}

/** draft or paused → active (active stays active). The references are checked again: a template may be gone. */
export async function activate(deps: Deps, ctx: OrgContext, id: string) {
  const { orgId } = requireUser(ctx);
  requireCan(ctx, 'automation:manage');
  const current = await load(deps, orgId, id);
  if (current.status !== 'active') {
    if (current.actions.length === 0) throw ruleIncomplete();
    await checkTriggerReferences(deps, ctx, repo.triggerOf(current));
    await checkReferences(deps, ctx, current.actions);
    await withTransaction(deps.pool, async (tx) => {
      await repo.setStatus(tx, orgId, current.id, 'active');
      await syncTimers(tx, orgId, current.id);
    });
    deps.rules.changed(orgId);
  }
  return repo.toRule((await repo.getRule(deps.pool, orgId, current.id))!);
}

/** active → paused (paused stays paused); a draft was never active, so it cannot be paused. */
export async function pause(deps: Deps, ctx: OrgContext, id: string) {
  const { orgId } = requireUser(ctx);
  requireCan(ctx, 'automation:manage');
  const current = await load(deps, orgId, id);
  if (current.status === 'draft') {
    throw new AppError('failed_precondition', 'Only an active rule can be paused; this one is a draft', { code: 'invalid_state' });
  }
  if (current.status === 'active') {
    await withTransaction(deps.pool, async (tx) => {
      await repo.setStatus(tx, orgId, current.id, 'paused');
      await syncTimers(tx, orgId, current.id);
    });
    deps.rules.changed(orgId);
  }
  return repo.toRule((await repo.getRule(deps.pool, orgId, current.id))!);
}

export async function remove(deps: Deps, ctx: OrgContext, id: string) {
  const { orgId } = requireUser(ctx);
  requireCan(ctx, 'automation:manage');
  if (!isUuid(id)) throw notFound('Automation rule');
  const ruleId = id.toLowerCase();
  await withTransaction(deps.pool, async (tx) => {
    const name = await repo.deleteRule(tx, orgId, ruleId);
    if (name === undefined) throw notFound('Automation rule');
    await recordAudit(tx, ctx, { action: 'automation_rule.deleted', resourceType: 'automation_rule', resourceId: ruleId, details: { name } });
  });
  deps.rules.changed(orgId);
  return { ok: true, message: 'Automation rule deleted' };
}

export async function listRuns(deps: Deps, ctx: OrgContext, req: { ruleId: string; page?: number; limit?: number; status?: string }) {
  const { orgId } = requireUser(ctx);
  const rule = await load(deps, orgId, req.ruleId);
  optionalOneOf(req.status, rules.RUN_STATUSES, 'status');
  return runs.listRuns(deps.pool, orgId, rule.id, pageOf(req), req.status || undefined);
}

/** One run of any rule of the caller's org; another org's run is simply not found. */
export async function getRun(deps: Deps, ctx: OrgContext, id: string) {
  const { orgId } = requireUser(ctx);
  const run = isUuid(id) ? await runs.getRun(deps.pool, orgId, id.toLowerCase()) : undefined;
  if (!run) throw notFound('Automation run');
  return run;
}

/**
 * A new signing secret for the rule's http_request steps, shown this once; the old one signs nothing from now on.
 * Audited (never the secret itself).
 */
export async function rotateSecret(deps: Deps, ctx: OrgContext, id: string) {
  const { orgId } = requireUser(ctx);
  requireCan(ctx, 'automation:manage');
  const rule = await load(deps, orgId, id);
  const { secret, secretEnc } = await newSecret(deps, orgId, rule.id);
  await withTransaction(deps.pool, async (tx) => {
    await repo.setSecret(tx, orgId, rule.id, secretEnc);
    await recordAudit(tx, ctx, {
      action: 'automation_rule.secret_rotated',
      resourceType: 'automation_rule',
      resourceId: rule.id,
      details: { name: rule.name },
    });
  });
  return { secret };
}

/**
 * A run of an active rule started by hand on a contact and/or conversation of the org: the trigger's conditions are not
 * judged (a person chose to run it); its steps run as any run's do (if steps read `contact.*`, fields the trigger's
 * event would have carried are absent). Each call is its own run (a fresh event id); 202 with the run's id, which the
 * run history shows as trigger `manual`. The contact is checked with crm; a conversation that does not exist in the org
 * fails the steps that use it (messaging answers them not found).
 */
export async function runNow(deps: Deps, ctx: OrgContext, req: { id: string; contactId?: string; conversationId?: string }) {
  const { orgId, userId } = requireUser(ctx);
  requireCan(ctx, 'automation:manage');
  const rule = await load(deps, orgId, req.id);
  if (rule.status !== 'active')
    throw new AppError('failed_precondition', `Only an active rule can be run; this one is ${rule.status}`, { code: 'invalid_state' });
  const contactId = req.contactId?.trim() ? req.contactId.trim().toLowerCase() : undefined;
  const conversationId = req.conversationId?.trim() ? req.conversationId.trim().toLowerCase() : undefined;
  if (contactId && !isUuid(contactId)) throw invalid('contactId', 'must be a contact id');
  if (conversationId && !isUuid(conversationId)) throw invalid('conversationId', 'must be a conversation id');
  let contact: Record<string, unknown> | undefined;
  if (contactId) {
    try {
      contact = { ...(await deps.remote.crm().GetContactBrief({ id: contactId }, ctx)) };
    } catch (err) {
      if ((err as { code?: number }).code === status.NOT_FOUND) throw invalid('contactId', `no contact ${contactId} in this organization`);
      throw new AppError('unavailable', 'Cannot check the contact right now (crm unavailable); try again shortly');
    }
  }
  const id = randomUUID();
  const eventId = randomUUID();
  await withTransaction(deps.pool, async (tx) => {
    await runs.insertRun(tx, {
      id,
      orgId,
      ruleId: rule.id,
      eventId,
      eventType: MANUAL_EVENT,
      contactId: contactId ?? null,
      conversationId: conversationId ?? null,
      triggerType: MANUAL_TRIGGER,
      context: {
        event: { id: eventId, type: MANUAL_EVENT, occurredAt: new Date().toISOString() },
        data: { contactId, conversationId, requestedBy: userId },
        ...(contact ? { contact } : {}),
      },
      actions: rule.actions,
    });
    await tx.query(`SELECT pg_notify('${runs.RUNS_CHANNEL}', '')`);
  });
  return { runId: id };
}
