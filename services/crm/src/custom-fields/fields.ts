import { randomUUID } from 'node:crypto';
import { AppError, invalid, notFound, requireCan, OrgContext } from '@crm/grpc-kit';
import { withTransaction, type Pool, type PoolClient } from '@crm/db';
import { recordAudit } from '@crm/events';
import type { crm } from '@crm/proto-types';
import { isUuid, oneOf, requireText, rules } from '../shared';
import * as repo from './fields.repo';

/**
 * What the custom-field use cases read of the service's Deps (app.ts passes the whole Deps). Not ../deps itself: the
 * contacts module imports this one for a contact's values and deps.ts imports contacts, so naming deps.ts here would
 * close a circle.
 */
export interface FieldsDeps {
  pool: Pool;
  /** The contact writer's part this module uses (the contacts module's ContactWriters; named by shape for the reason above). */
  contactWriter: { inTrace(traceparent: string | undefined): { removeCustomField(tx: PoolClient, orgId: string, key: string): Promise<number> } };
}

const keyTaken = () =>
  new AppError('already_exists', 'A custom field with this key already exists', {
    code: 'field_key_taken',
    details: [{ field: 'key', message: 'is already used by another custom field' }],
  });

export async function list(deps: FieldsDeps, ctx: OrgContext) {
  const { orgId } = ctx;
  return { data: (await repo.listFields(deps.pool, orgId)).map(repo.toField) };
}

export async function create(deps: FieldsDeps, ctx: OrgContext, req: crm.ContactFieldInput__Output) {
  requireCan(ctx, 'settings:edit');
  const { orgId } = ctx;
  const type = oneOf(req.type, rules.FIELD_TYPES, 'type');
  const f = {
    id: randomUUID(),
    orgId,
    key: rules.fieldKey(req.key),
    label: requireText(req.label, 'label', rules.FIELD_LABEL_MAX),
    type,
    options: rules.fieldOptions(type, req.options?.values),
    position: rules.position(req.position),
  };
  if ((await repo.countFields(deps.pool, orgId)) >= rules.MAX_FIELDS)
    throw invalid('key', `an organization has at most ${rules.MAX_FIELDS} custom fields`);
  try {
    return repo.toField(await repo.insertField(deps.pool, f));
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw keyTaken();
    throw err;
  }
}

export async function update(deps: FieldsDeps, ctx: OrgContext, req: crm.ContactFieldInput__Output) {
  requireCan(ctx, 'settings:edit');
  const { orgId } = ctx;
  const row = isUuid(req.id) ? await repo.findField(deps.pool, orgId, req.id) : undefined;
  if (!row) throw notFound('Custom field');
  // Stored values were checked against the key and type; changing either would orphan or invalidate them.
  if (req.key !== undefined && req.key !== row.key) throw invalid('key', 'cannot be changed; create another field');
  if (req.type !== undefined && req.type !== row.type) throw invalid('type', 'cannot be changed; create another field');
  const patch = {
    label: req.label === undefined ? undefined : requireText(req.label, 'label', rules.FIELD_LABEL_MAX),
    options: req.options ? rules.fieldOptions(row.type, req.options.values) : undefined,
    position: req.position === undefined ? undefined : rules.position(req.position),
  };
  const updated = await repo.updateField(deps.pool, orgId, row.id, patch);
  if (!updated) throw notFound('Custom field');
  return repo.toField(updated);
}

/** The definition and, in the same transaction, its values on every contact of the org. */
export async function remove(deps: FieldsDeps, ctx: OrgContext, id: string) {
  requireCan(ctx, 'settings:edit');
  const { orgId } = ctx;
  if (!isUuid(id)) throw notFound('Custom field');
  await withTransaction(deps.pool, async (tx) => {
    const deleted = await repo.deleteField(tx, orgId, id);
    if (!deleted) throw notFound('Custom field');
    const contacts = await deps.contactWriter.inTrace(ctx.traceparent).removeCustomField(tx, orgId, deleted.key);
    await recordAudit(tx, ctx, {
      action: 'contact_field.deleted',
      resourceType: 'contact_field',
      resourceId: id,
      details: { key: deleted.key, contacts },
    });
  });
  return { ok: true, message: 'Custom field deleted' };
}
