import { randomUUID } from 'node:crypto';
import {
  AppError,
  decodeRemoteError,
  invalid,
  notFound,
  requireCan,
  requireUser,
  traceFields,
  OrgContext,
  status as grpcStatus,
} from '@crm/grpc-kit';
import type { Deps } from '../deps';
import * as repo from './campaigns.repo';
import { listRecipients } from './recipients.repo';
import { getTemplate } from '../templates';
import { Scalar, unfilledPlaceholders, variablesProblem } from './campaign-text';
import { automationRules as rules, isUuid, optionalOneOf } from '@crm/validation';
import { channelUnavailable, hasChannel } from '../email-channel';
import { findList, ListBrief } from '../lists';

/** NOTIFY channel: activation, resume and rescheduling wake every sender at once instead of at the next poll. */
export const CAMPAIGNS_CHANNEL = 'automation_campaigns';

const TEXT_MAX = rules.CAMPAIGN_TEXT_MAX;
export const CAMPAIGN_TYPES = ['broadcast', 'email'] as const;

const COUNT_DEADLINE_MS = 1_000;
/** How far in the past a schedule may lie (a clock a little behind, a form submitted slowly). */
const SCHEDULE_GRACE_MS = 5 * 60_000;

export interface CampaignInput {
  id: string;
  name?: string;
  description?: string;
  type?: string;
  listId?: string;
  templateId?: string;
  /** ISO timestamp; on update '' clears it. */
  schedule?: string;
  variablesJson?: string;
  /** Email campaigns: the subject line. */
  subject?: string;
  /** Broadcasts: the account to start conversations from; on update '' clears it. */
  chatnetAccountId?: string;
}

/**
 * The campaign's own chat-network account: one of the org's (the connector says; another org's or an unknown id is a
 * 400 naming the field). '' or absent: none (chosen per recipient).
 */
async function accountFor(deps: Deps, ctx: OrgContext, raw: string | undefined): Promise<string | null> {
  const id = raw?.trim();
  if (!id) return null;
  const invalidAccount = () => invalid('chatnetAccountId', `no chat-network account ${id} in this organization`);
  if (!isUuid(id)) throw invalidAccount();
  try {
    await deps.remote.connector().GetAccount({ id }, ctx);
  } catch (err) {
    if (decodeRemoteError(err as never).grpcCode === grpcStatus.NOT_FOUND) throw invalidAccount();
    throw new AppError('unavailable', 'The chat connector is unavailable; try again shortly');
  }
  return id.toLowerCase();
}

function requiredText(field: string, v: string | undefined, max: number): string {
  const s = v?.trim();
  if (!s) throw invalid(field, 'is required');
  if (s.length > max) throw invalid(field, `must be at most ${max} characters`);
  return s;
}

function description(v: string | undefined): string {
  const s = v?.trim() ?? '';
  if (s.length > TEXT_MAX.description) throw invalid('description', `must be at most ${TEXT_MAX.description} characters`);
  return s;
}

/** broadcast: a chat-network message to every member (through messaging); email: an email (SMTP). */
function campaignType(v: string | undefined): string {
  const t = v?.trim() || 'broadcast';
  if (!(CAMPAIGN_TYPES as readonly string[]).includes(t)) throw invalid('type', `must be one of ${CAMPAIGN_TYPES.join(', ')}`);
  return t;
}

/** An email campaign needs somewhere to send from: the org's own SMTP server or the server's SMTP_URL. */
async function requireEmailChannel(deps: Deps, orgId: string): Promise<void> {
  if (!(await hasChannel(deps, orgId))) throw channelUnavailable();
}

function variables(json: string | undefined): Record<string, Scalar> {
  if (json === undefined || json === '') return {};
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    throw invalid('variables', 'is not valid JSON');
  }
  const problem = variablesProblem(v);
  if (problem) throw invalid(problem[0], problem[1]);
  return v as Record<string, Scalar>;
}

export function parseSchedule(raw: string | undefined, field = 'schedule'): Date | undefined {
  if (raw === undefined || raw === '') return undefined;
  const t = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(raw) ? new Date(raw) : undefined;
  if (!t || Number.isNaN(t.getTime())) throw invalid(field, 'must be an ISO 8601 timestamp such as 2030-01-31T09:00:00.000Z');
  if (t.getTime() < Date.now() - SCHEDULE_GRACE_MS) throw invalid(field, 'must not be in the past');
  return t;
}

const invalidState = (message: string) => new AppError('failed_precondition', message, { code: 'invalid_state' });

async function load(deps: Deps, orgId: string, id: string) {
  const row = isUuid(id) ? await repo.getCampaign(deps.pool, orgId, id.toLowerCase()) : undefined;
  if (!row) throw notFound('Campaign');
  return row;
}

async function templateFor(deps: Deps, orgId: string, id: string | undefined, field = 'templateId') {
  const tid = id?.trim();
  if (!tid) throw invalid(field, 'is required');
  const t = isUuid(tid) ? await getTemplate(deps.pool, orgId, tid.toLowerCase()) : undefined;
  if (!t) throw invalid(field, `no template ${tid} in this organization`);
  return t;
}

async function listFor(deps: Deps, ctx: OrgContext, id: string | undefined): Promise<ListBrief> {
  const lid = id?.trim();
  if (!lid) throw invalid('listId', 'is required');
  const list = isUuid(lid) ? await findList(deps, ctx, lid.toLowerCase()) : undefined;
  if (!list) throw invalid('listId', `no customer list ${lid} in this organization`);
  return list;
}

function checkPlaceholders(content: string, vars: Record<string, Scalar>, kind: 'invalid' | 'state' = 'invalid'): void {
  const missing = unfilledPlaceholders(content, vars);
  if (missing.length === 0) return;
  const message = `the template uses ${missing.map((m) => `{{${m}}}`).join(', ')}, which is neither a contact field nor in variables; give ${missing.length > 1 ? 'them values' : 'it a value'}`;
  if (kind === 'invalid') throw invalid('variables', message);
  throw new AppError('failed_precondition', `variables: ${message}`, { code: 'campaign_incomplete', details: [{ field: 'variables', message }] });
}

async function wakeSenders(deps: Deps, ctx: OrgContext): Promise<void> {
  await deps.pool
    .query(`SELECT pg_notify('${CAMPAIGNS_CHANNEL}', '')`)
    .catch((err) => deps.log.warn({ err, ...traceFields(ctx) }, 'campaigns: NOTIFY failed; senders pick the change up at their next poll'));
}

/**
 * A draft's contactCount is its list's live count. Asked of crm when someone looks (at most `limit`
 * lists at once); when crm cannot answer, the last known count stands and the reason is logged.
 */
async function refreshDraftCounts(deps: Deps, ctx: OrgContext, rows: repo.CampaignRow[]): Promise<void> {
  const drafts = rows.filter((r) => r.status === 'draft');
  const listIds = [...new Set(drafts.map((r) => r.list_id))];
  if (listIds.length === 0) return;
  const counts = new Map<string, number>();
  const queue = [...listIds];
  const worker = async () => {
    for (let id = queue.shift(); id; id = queue.shift()) {
      try {
        // A listing must not wait long on crm for a number it already has.
        const list = await findList(deps, ctx, id, COUNT_DEADLINE_MS);
        if (list) counts.set(id, list.contactCount);
      } catch (err) {
        deps.log.warn({ err, listId: id, ...traceFields(ctx) }, 'campaigns: live list count unavailable; showing the last known count');
        queue.length = 0;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(8, listIds.length) }, worker));
  for (const r of drafts) {
    const n = counts.get(r.list_id);
    if (n !== undefined && n !== r.contact_count) {
      r.contact_count = n;
      await repo.refreshDraftCount(deps.pool, r.org_id, r.id, n);
    }
  }
}

export async function list(deps: Deps, ctx: OrgContext, req: { status?: string }) {
  const { orgId } = requireUser(ctx);
  optionalOneOf(req.status, rules.CAMPAIGN_STATUSES, 'status');
  const rows = await repo.listCampaigns(deps.pool, orgId, req.status || undefined);
  await refreshDraftCounts(deps, ctx, rows);
  return { data: rows.map(repo.toCampaign) };
}

export async function get(deps: Deps, ctx: OrgContext, id: string) {
  const { orgId } = requireUser(ctx);
  const row = await load(deps, orgId, id);
  await refreshDraftCounts(deps, ctx, [row]);
  return repo.toCampaign(row);
}

export async function create(deps: Deps, ctx: OrgContext, input: CampaignInput) {
  const { orgId, userId } = requireUser(ctx);
  requireCan(ctx, 'campaigns:manage');
  const name = requiredText('name', input.name, TEXT_MAX.name);
  const desc = description(input.description);
  const type = campaignType(input.type);
  // A campaign is always created as a draft (the spec), channel or not: starting it checks the channel.
  const subject = type === 'email' ? requiredText('subject', input.subject, TEXT_MAX.subject) : '';
  const vars = variables(input.variablesJson);
  const schedule = parseSchedule(input.schedule) ?? null;
  const template = await templateFor(deps, orgId, input.templateId);
  checkPlaceholders(`${subject}\n${template.content}`, vars);
  const list = await listFor(deps, ctx, input.listId);
  const chatnetAccountId = type === 'broadcast' ? await accountFor(deps, ctx, input.chatnetAccountId) : null;
  const row = await repo.insertCampaign(deps.pool, {
    chatnetAccountId,
    id: randomUUID(),
    orgId,
    name,
    description: desc,
    type,
    listId: list.id.toLowerCase(),
    templateId: template.id,
    subject,
    variables: vars,
    schedule,
    contactCount: list.contactCount,
    createdBy: userId || null,
  });
  return repo.toCampaign(row);
}

/** Only a draft is edited (an active campaign is paused or cancelled instead); only sent fields change. */
export async function update(deps: Deps, ctx: OrgContext, input: CampaignInput) {
  const { orgId } = requireUser(ctx);
  requireCan(ctx, 'campaigns:manage');
  const current = await load(deps, orgId, input.id);
  if (current.status !== 'draft') throw invalidState(`Only a draft campaign can be edited; this one is ${current.status}`);
  const type = input.type !== undefined ? campaignType(input.type) : current.type;
  // The channel is checked when the campaign starts (activation), so a draft stays editable meanwhile.
  const subject = type !== 'email' ? '' : input.subject !== undefined ? requiredText('subject', input.subject, TEXT_MAX.subject) : current.subject;
  if (type === 'email' && !subject) throw invalid('subject', 'is required for an email campaign');
  const patch: repo.CampaignPatch = {
    type: input.type !== undefined ? type : undefined,
    subject: subject !== current.subject ? subject : undefined,
    name: input.name !== undefined ? requiredText('name', input.name, TEXT_MAX.name) : undefined,
    description: input.description !== undefined ? description(input.description) : undefined,
    variables: input.variablesJson !== undefined ? variables(input.variablesJson) : undefined,
    schedule: input.schedule === undefined ? undefined : (parseSchedule(input.schedule) ?? null),
    chatnetAccountId: input.chatnetAccountId === undefined ? undefined : await accountFor(deps, ctx, input.chatnetAccountId),
  };
  if (input.listId !== undefined) {
    const list = await listFor(deps, ctx, input.listId);
    patch.listId = list.id.toLowerCase();
    patch.contactCount = list.contactCount;
  }
  const template =
    input.templateId !== undefined ? await templateFor(deps, orgId, input.templateId) : await getTemplate(deps.pool, orgId, current.template_id);
  if (input.templateId !== undefined) patch.templateId = template!.id;
  if (template && (input.templateId !== undefined || patch.variables || patch.subject))
    checkPlaceholders(`${subject}\n${template.content}`, patch.variables ?? current.variables);
  const row = await repo.updateDraft(deps.pool, orgId, current.id, patch);
  if (!row) throw invalidState('Only a draft campaign can be edited; this one was just activated or cancelled');
  return repo.toCampaign(row);
}

/** Set when sending starts (draft, active or paused); an active campaign waits for a later time, or goes now. */
export async function schedule(deps: Deps, ctx: OrgContext, req: { id: string; schedule?: string }) {
  const { orgId } = requireUser(ctx);
  requireCan(ctx, 'campaigns:manage');
  const current = await load(deps, orgId, req.id);
  if (req.schedule === undefined || req.schedule === '') throw invalid('schedule', 'is required');
  const at = parseSchedule(req.schedule)!;
  const row = await repo.setSchedule(deps.pool, orgId, current.id, at);
  if (!row) throw invalidState(`A ${current.status} campaign cannot be rescheduled`);
  if (row.status === 'active') await wakeSenders(deps, ctx);
  return repo.toCampaign(row);
}

/**
 * draft → active: the template and list are checked again (either may have changed), the template text is
 * fixed, and the sender snapshots the list's members into the recipients, then sends from the schedule on.
 * paused → active resumes; active stays active; completed and cancelled campaigns are finished.
 */
export async function activate(deps: Deps, ctx: OrgContext, id: string) {
  const { orgId } = requireUser(ctx);
  requireCan(ctx, 'campaigns:manage');
  const current = await load(deps, orgId, id);
  let row: repo.CampaignRow | undefined = current;
  switch (current.status) {
    case 'active':
      break;
    case 'completed':
    case 'cancelled':
      throw invalidState(`A ${current.status} campaign cannot be activated again; create a new one`);
    case 'paused':
      // Paused for want of a channel (or by hand): resuming without one would only pause it again.
      if (current.type === 'email') await requireEmailChannel(deps, orgId);
      row = await repo.resume(deps.pool, orgId, current.id);
      break;
    case 'draft': {
      const template = await getTemplate(deps.pool, orgId, current.template_id);
      if (!template) {
        throw new AppError('failed_precondition', 'templateId: the template was deleted; choose another one', {
          code: 'campaign_incomplete',
          details: [{ field: 'templateId', message: 'the template was deleted' }],
        });
      }
      if (current.type === 'email') await requireEmailChannel(deps, orgId);
      checkPlaceholders(`${current.subject}\n${template.content}`, current.variables, 'state');
      const list = await findList(deps, ctx, current.list_id);
      if (!list) {
        throw new AppError('failed_precondition', 'listId: the customer list was deleted; choose another one', {
          code: 'campaign_incomplete',
          details: [{ field: 'listId', message: 'the customer list was deleted' }],
        });
      }
      row = await repo.activateDraft(deps.pool, orgId, current.id, template.content, list.contactCount);
      break;
    }
  }
  if (!row) return repo.toCampaign(await load(deps, orgId, current.id));
  if (row.status === 'active' && current.status !== 'active') await wakeSenders(deps, ctx);
  return repo.toCampaign(row);
}

/** active → paused: the message in flight finishes, nothing more is sent until it is activated again. */
export async function pause(deps: Deps, ctx: OrgContext, id: string) {
  const { orgId } = requireUser(ctx);
  requireCan(ctx, 'campaigns:manage');
  const current = await load(deps, orgId, id);
  if (current.status === 'paused') return repo.toCampaign(current);
  if (current.status !== 'active') throw invalidState(`Only an active campaign can be paused; this one is ${current.status}`);
  const row = await repo.pause(deps.pool, orgId, current.id);
  return repo.toCampaign(row ?? (await load(deps, orgId, current.id)));
}

/** draft, active or paused → cancelled, for good: recipients not reached yet are never sent to. */
export async function cancel(deps: Deps, ctx: OrgContext, id: string) {
  const { orgId } = requireUser(ctx);
  requireCan(ctx, 'campaigns:manage');
  const current = await load(deps, orgId, id);
  if (current.status === 'cancelled') return repo.toCampaign(current);
  if (current.status === 'completed') throw invalidState('A completed campaign cannot be cancelled');
  const row = await repo.cancel(deps.pool, orgId, current.id);
  if (!row) throw invalidState('The campaign completed before it could be cancelled');
  return repo.toCampaign(row);
}

export async function recipients(deps: Deps, ctx: OrgContext, req: { campaignId: string; page?: number; limit?: number; status?: string }) {
  const { orgId } = requireUser(ctx);
  const campaign = await load(deps, orgId, req.campaignId);
  optionalOneOf(req.status, rules.RECIPIENT_STATUSES, 'status');
  const page = { page: Math.max(1, req.page || 1), limit: Math.min(100, Math.max(1, req.limit || 50)) };
  return listRecipients(deps.pool, campaign.id, campaign.status, page, req.status || undefined);
}
