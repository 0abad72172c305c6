import { randomUUID } from 'node:crypto';
import { AppError, invalid, notFound, requireCan, OrgContext } from '@crm/grpc-kit';
import { withTransaction } from '@crm/db';
import { recordAudit } from '@crm/events';
import type { Deps } from '../deps';
import { isUuid, oneOf, requireText } from '../shared';
import * as repo from './fields.repo';
import { FIELD_TYPES, type FieldType } from './values';

const KEY = /^[a-z][a-z0-9_]{0,39}$/;
/** Enough for any real form; keeps every contact write's definition lookup small. */
export const MAX_FIELDS = 100;
const MAX_OPTIONS = 100;
const OPTION_MAX = 100;
const LABEL_MAX = 100;

export interface FieldInput {
  id?: string;
  key?: string;
  label?: string;
  type?: string;
  options?: { values: string[] } | null;
  position?: number;
}

function key(value: string | undefined): string {
  const k = (value ?? '').trim();
  if (!KEY.test(k)) throw invalid('key', 'must be 1-40 characters: a lowercase letter, then lowercase letters, digits or _');
  return k;
}

function position(value: number | undefined): number {
  if (value === undefined) return 0;
  if (!Number.isInteger(value) || value < 0 || value > 10_000) throw invalid('position', 'must be an integer from 0 to 10000');
  return value;
}

/** Options of a select field: 1-100 distinct (case-insensitively) non-empty texts; other types take none. */
function options(type: FieldType, values: string[] | undefined): string[] {
  const list = (values ?? []).map((v) => String(v).trim());
  if (type !== 'select') {
    if (list.length > 0) throw invalid('options', 'are only for select fields');
    return [];
  }
  if (list.length === 0) throw invalid('options', 'must list at least one option for a select field');
  if (list.length > MAX_OPTIONS) throw invalid('options', `must list at most ${MAX_OPTIONS} options`);
  const seen = new Set<string>();
  for (const o of list) {
    if (!o) throw invalid('options', 'must not contain empty options');
    if (o.length > OPTION_MAX) throw invalid('options', `each option must be at most ${OPTION_MAX} characters`);
    if (seen.has(o.toLowerCase())) throw invalid('options', `lists "${o}" twice`);
    seen.add(o.toLowerCase());
  }
  return list;
}

const keyTaken = () =>
  new AppError('already_exists', 'A custom field with this key already exists', { code: 'field_key_taken', details: [{ field: 'key', message: 'is already used by another custom field' }] });

export async function list(deps: Deps, ctx: OrgContext) {
  const { orgId } = ctx;
  return { data: (await repo.listFields(deps.pool, orgId)).map(repo.toField) };
}

export async function create(deps: Deps, ctx: OrgContext, req: FieldInput) {
  requireCan(ctx, 'settings:edit');
  const { orgId } = ctx;
  const type = oneOf(req.type, FIELD_TYPES, 'type');
  const f = {
    id: randomUUID(),
    orgId,
    key: key(req.key),
    label: requireText(req.label, 'label', LABEL_MAX),
    type,
    options: options(type, req.options?.values),
    position: position(req.position),
  };
  if ((await repo.countFields(deps.pool, orgId)) >= MAX_FIELDS) throw invalid('key', `an organization has at most ${MAX_FIELDS} custom fields`);
  try {
    return repo.toField(await repo.insertField(deps.pool, f));
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw keyTaken();
    throw err;
  }
}

export async function update(deps: Deps, ctx: OrgContext, req: FieldInput) {
  requireCan(ctx, 'settings:edit');
  const { orgId } = ctx;
  const row = isUuid(req.id) ? await repo.findField(deps.pool, orgId, req.id) : undefined;
  if (!row) throw notFound('Custom field');
  // Stored values were checked against the key and type; changing either would orphan or invalidate them.
  if (req.key !== undefined && req.key !== row.key) throw invalid('key', 'cannot be changed; create another field');
  if (req.type !== undefined && req.type !== row.type) throw invalid('type', 'cannot be changed; create another field');
  const patch = {
    label: req.label === undefined ? undefined : requireText(req.label, 'label', LABEL_MAX),
    options: req.options ? options(row.type, req.options.values) : undefined,
    position: req.position === undefined ? undefined : position(req.position),
  };
  const updated = await repo.updateField(deps.pool, orgId, row.id, patch);
  if (!updated) throw notFound('Custom field');
  return repo.toField(updated);
}

/** The definition and, in the same transaction, its values on every contact of the org. */
export async function remove(deps: Deps, ctx: OrgContext, id: string) {
  requireCan(ctx, 'settings:edit');
  const { orgId } = ctx;
  if (!isUuid(id)) throw notFound('Custom field');
  await withTransaction(deps.pool, async (tx) => {
    const deleted = await repo.deleteField(tx, orgId, id);
    if (!deleted) throw notFound('Custom field');
    const contacts = await repo.removeKeyFromContacts(tx, orgId, deleted.key);
    await recordAudit(tx, ctx, { action: 'contact_field.deleted', resourceType: 'contact_field', resourceId: id, details: { key: deleted.key, contacts } });
  });
  return { ok: true, message: 'Custom field deleted' };
}
