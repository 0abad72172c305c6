import { randomUUID } from 'node:crypto';
import { AppError, invalid, notFound, requireCan, OrgContext } from '@crm/grpc-kit';
import { iso, Queryable, withTransaction } from '@crm/db';
import type { Deps } from '../deps';
import { findContact, statusExists, viewerOf } from '../contacts';
import { isUuid } from '../shared';
import { applyConfigPatch, applyRulePatch, Condition, ConfigPatch, factorOf, MAX_RULES, RulePatch, ScoringConfig } from './model';
import * as repo from './scoring.repo';

/**
 * The ScoringService use cases. Reading needs a signed-in user of the org; writing config and rules needs
 * settings:edit (admin and owner). Every write that can move scores asks for an org-wide recompute, which the
 * worker runs in the background (kick) in batches.
 */

export interface Kick {
  kick(): void;
}

async function configView(deps: Deps, orgId: string, row?: repo.ConfigRow) {
  const [rules, r] = await Promise.all([repo.listRules(deps.pool, orgId), row ? Promise.resolve(row) : repo.findConfig(deps.pool, orgId)]);
  const c = repo.configOf(r);
  return {
    orgId,
    ...c,
    rules: rules.map((x) => ({ id: x.id, name: x.name, weight: x.weight, factor: factorOf(x) })),
    recomputing: r ? r.version > r.recomputed_version : false,
    updatedAt: r ? iso(r.updated_at) : '',
  };
}

export async function getConfig(deps: Deps, ctx: OrgContext) {
  return configView(deps, ctx.orgId);
}

function sameConfig(a: ScoringConfig, b: ScoringConfig): boolean {
  return (Object.keys(a) as (keyof ScoringConfig)[]).every((k) => a[k] === b[k]);
}

export async function updateConfig(deps: Deps, ctx: OrgContext, worker: Kick, req: ConfigPatch) {
  requireCan(ctx, 'settings:edit');
  const { orgId } = ctx;
  const row = await withTransaction(deps.pool, async (tx) => {
    // Serialise concurrent writers of one org's config, whether or not its row exists yet.
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('crm.scoring_config'), hashtext($1))", [orgId]);
    const current = await repo.findConfig(tx, orgId);
    const next = applyConfigPatch(repo.configOf(current), req);
    if (current && sameConfig(repo.configOf(current), next)) return current;
    return repo.saveConfig(tx, orgId, next);
  });
  worker.kick();
  return configView(deps, orgId, row);
}

export async function listRules(deps: Deps, ctx: OrgContext) {
  return { data: (await repo.listRules(deps.pool, ctx.orgId)).map(repo.toRule) };
}

async function loadRule(deps: Deps, orgId: string, id: string) {
  const row = isUuid(id) ? await repo.findRule(deps.pool, orgId, id) : undefined;
  if (!row) throw notFound('Scoring rule');
  return row;
}

export async function getRule(deps: Deps, ctx: OrgContext, id: string) {
  return repo.toRule(await loadRule(deps, ctx.orgId, id));
}

/** A stage_reached rule names a custom status of this organization (another org's id is as unknown as a made-up one). */
async function assertStageOf(db: Queryable, orgId: string, rule: { condition: string; value: string }): Promise<void> {
  if (rule.condition === 'stage_reached' && rule.value && !(await statusExists(db, orgId, rule.value))) {
    throw invalid('value', 'is not a custom status of this organization');
  }
}

export async function createRule(deps: Deps, ctx: OrgContext, worker: Kick, req: RulePatch) {
  requireCan(ctx, 'settings:edit');
  const { orgId } = ctx;
  const fields = applyRulePatch({}, req);
  const row = await withTransaction(deps.pool, async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('crm.scoring_rules'), hashtext($1))", [orgId]);
    if ((await repo.countRules(tx, orgId)) >= MAX_RULES) {
      throw new AppError('failed_precondition', `An organization can have at most ${MAX_RULES} scoring rules`, { code: 'too_many_rules' });
    }
    await assertStageOf(tx, orgId, fields);
    const inserted = await repo.insertRule(tx, randomUUID(), orgId, fields);
    await repo.requestRecompute(tx, orgId);
    return inserted;
  });
  worker.kick();
  return repo.toRule(row);
}

export async function updateRule(deps: Deps, ctx: OrgContext, worker: Kick, req: RulePatch & { id: string }) {
  requireCan(ctx, 'settings:edit');
  const { orgId } = ctx;
  if (!isUuid(req.id)) throw notFound('Scoring rule');
  const { row, rescore } = await withTransaction(deps.pool, async (tx) => {
    const current = await repo.findRule(tx, orgId, req.id, true);
    if (!current) throw notFound('Scoring rule');
    const next = applyRulePatch(
      { name: current.name, condition: current.condition as Condition, value: current.value, points: current.points, weight: current.weight },
      req,
    );
    await assertStageOf(tx, orgId, next);
    const updated = (await repo.updateRule(tx, orgId, req.id, next))!;
    // A new name changes no score.
    const moves =
      next.condition !== current.condition || next.value !== current.value || next.points !== current.points || next.weight !== current.weight;
    if (moves) await repo.requestRecompute(tx, orgId);
    return { row: updated, rescore: moves };
  });
  if (rescore) worker.kick();
  return repo.toRule(row);
}

export async function deleteRule(deps: Deps, ctx: OrgContext, worker: Kick, id: string) {
  requireCan(ctx, 'settings:edit');
  const { orgId } = ctx;
  if (!isUuid(id)) throw notFound('Scoring rule');
  await withTransaction(deps.pool, async (tx) => {
    if (!(await repo.deleteRule(tx, orgId, id))) throw notFound('Scoring rule');
    await repo.requestRecompute(tx, orgId);
  });
  worker.kick();
  return { ok: true, message: 'Scoring rule deleted' };
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/**
 * The contact's leadScore and its breakdown as of the moment it was computed, so the parts add up to the
 * total (before clamping and rounding). While an org-wide recompute is running the breakdown already uses the
 * new rules; the total follows when the recompute reaches the contact.
 */
export async function contactScore(deps: Deps, ctx: OrgContext, id: string) {
  const { orgId } = ctx;
  // A contact hidden from the agent by inbox visibility is as unknown as another org's.
  const contact = isUuid(id) ? await findContact(deps.pool, orgId, id, false, viewerOf(ctx)) : undefined;
  if (!contact) throw notFound('Contact');
  const [configRow, asOf] = await Promise.all([repo.findConfig(deps.pool, orgId), repo.scoredAt(deps.pool, orgId, contact.id)]);
  const config = repo.configOf(configRow);
  const rows = asOf ? await repo.breakdownOf(deps.pool, orgId, contact.id, config, asOf) : [];
  const breakdown = rows
    .map((r) => {
      const points = r.points * r.decayed;
      return {
        ruleId: r.rule_id,
        ruleName: r.rule_name,
        condition: r.condition,
        value: r.value,
        occurrences: r.occurrences,
        points: round2(points),
        weight: r.weight,
        contribution: round2(points * r.weight),
      };
    })
    .sort((a, b) => Math.abs(b.contribution) - Math.abs(a.contribution));
  return {
    contactId: contact.id,
    totalScore: contact.lead_score,
    baseScore: config.baseScore,
    breakdown,
    lastUpdated: iso(asOf ?? contact.created_at),
  };
}
