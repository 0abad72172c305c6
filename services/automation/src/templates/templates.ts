import { randomUUID } from 'node:crypto';
import type { Queryable } from '@crm/db';
import { AppError, invalid, notFound, requireCan, requireUser, OrgContext } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import * as repo from './templates.repo';
import { automationRules as rules, isUuid } from '@crm/validation';
import { placeholdersOf, VARIABLE_NAME } from '../text';

export interface TemplateInput {
  id: string;
  name?: string;
  content?: string;
  category?: string;
  variables: string[];
  setVariables: boolean;
}

const TEXT_MAX = rules.TEMPLATE_TEXT_MAX;

function requiredText(field: string, v: string | undefined, max: number): string {
  const s = v?.trim();
  if (!s) throw invalid(field, 'is required');
  if (s.length > max) throw invalid(field, `must be at most ${max} characters`);
  return s;
}

function category(v: string | undefined): string {
  const s = v?.trim() ?? '';
  if (s.length > TEXT_MAX.category) throw invalid('category', `must be at most ${TEXT_MAX.category} characters`);
  return s;
}

/**
 * `variables` are the placeholders the content uses. Not given: detected from the content. Given: they
 * must be exactly the content's placeholders, so a client's list can never drift from the text.
 */
function variablesFor(content: string, input: TemplateInput): string[] {
  const used = placeholdersOf(content);
  if (!input.setVariables) return used;
  const given: string[] = [];
  input.variables.forEach((raw, i) => {
    const v = raw.trim();
    if (!VARIABLE_NAME.test(v)) throw invalid(`variables[${i}]`, 'must be a name like name, phone or contact.email');
    if (!used.includes(v)) throw invalid(`variables[${i}]`, `"${v}" does not appear as {{${v}}} in content`);
    if (!given.includes(v)) given.push(v);
  });
  const missing = used.filter((v) => !given.includes(v));
  if (missing.length)
    throw invalid('variables', `content also uses ${missing.map((m) => `{{${m}}}`).join(', ')}; list every variable or leave variables out`);
  return given;
}

async function load(deps: Deps, orgId: string, id: string) {
  const row = isUuid(id) ? await repo.getTemplate(deps.pool, orgId, id.toLowerCase()) : undefined;
  if (!row) throw notFound('Template');
  return row;
}

export async function list(deps: Deps, ctx: OrgContext, req: { category?: string }) {
  const { orgId } = requireUser(ctx);
  return { data: await repo.listTemplates(deps.pool, orgId, req.category?.trim() || undefined) };
}

export async function get(deps: Deps, ctx: OrgContext, id: string) {
  const { orgId } = requireUser(ctx);
  return repo.toTemplate(await load(deps, orgId, id));
}

export async function create(deps: Deps, ctx: OrgContext, input: TemplateInput) {
  requireUser(ctx);
  requireCan(ctx, 'automation:manage');
  const name = requiredText('name', input.name, TEXT_MAX.name);
  const content = requiredText('content', input.content, TEXT_MAX.content);
  const row = await repo.insertTemplate(deps.pool, {
    id: randomUUID(),
    orgId: ctx.orgId,
    name,
    content,
    category: category(input.category),
    variables: variablesFor(content, input),
  });
  return repo.toTemplate(row);
}

export async function update(deps: Deps, ctx: OrgContext, input: TemplateInput) {
  requireUser(ctx);
  requireCan(ctx, 'automation:manage');
  const current = await load(deps, ctx.orgId, input.id);
  const name = input.name !== undefined ? requiredText('name', input.name, TEXT_MAX.name) : undefined;
  const content = input.content !== undefined ? requiredText('content', input.content, TEXT_MAX.content) : undefined;
  // New content re-detects the variables; a variables list alone is checked against the current content.
  const variables = content !== undefined || input.setVariables ? variablesFor(content ?? current.content, input) : undefined;
  const row = await repo.updateTemplate(deps.pool, ctx.orgId, current.id, {
    name,
    content,
    category: input.category !== undefined ? category(input.category) : undefined,
    variables,
  });
  if (!row) throw notFound('Template');
  return repo.toTemplate(row);
}

/**
 * Who still uses a template, by name (at most 5 each): the rules and the draft campaigns whose tables their own
 * code reads. The caller passes them in, so templates, which rules and campaigns build on, never imports them.
 */
export interface TemplateUsers {
  rules(db: Queryable, orgId: string, templateId: string): Promise<string[]>;
  draftCampaigns(db: Queryable, orgId: string, templateId: string): Promise<string[]>;
}

export async function remove(deps: Deps, ctx: OrgContext, id: string, usedBy: TemplateUsers) {
  requireUser(ctx);
  requireCan(ctx, 'automation:manage');
  const current = await load(deps, ctx.orgId, id);
  const users = await usedBy.rules(deps.pool, ctx.orgId, current.id);
  if (users.length) {
    throw new AppError('already_exists', `Template is used by rule ${users.map((n) => `"${n}"`).join(', ')}; change those rules first`, {
      code: 'template_in_use',
    });
  }
  const drafts = await usedBy.draftCampaigns(deps.pool, ctx.orgId, current.id);
  if (drafts.length) {
    throw new AppError(
      'already_exists',
      `Template is used by draft campaign ${drafts.map((n) => `"${n}"`).join(', ')}; change those campaigns first`,
      { code: 'template_in_use' },
    );
  }
  await repo.deleteTemplate(deps.pool, ctx.orgId, current.id);
  return { ok: true, message: 'Template deleted' };
}
