import { randomUUID } from 'node:crypto';
import { invalid, requireCan, OrgContext } from '@crm/grpc-kit';
import { type PoolClient, withTransaction } from '@crm/db';
import { type ContactRow, type ContactWriter, diff, type ImportedChange, type ImportedValues, lockImportMatches } from '../contacts';
import { applyChanges, fieldDefs, type FieldDef } from '../custom-fields';
import type { crm } from '@crm/proto-types';
import type { Deps } from '../deps';
import { type ImportError, readRow, type RowValues } from './import-row';

/** Rows in one ImportContacts call at most (the gateway sends 500). */
export const IMPORT_BATCH_MAX = 1000;

export interface ImportResult {
  created: number;
  updated: number;
  failed: number;
  errors: ImportError[];
}

/** A contact the batch writes: one that exists (matched) or one it creates; later rows may match it again. */
interface Target {
  before?: ContactRow;
  values: ImportedValues;
}

function newTarget(v: RowValues): Target {
  return {
    values: {
      id: randomUUID(),
      name: v.name ?? '',
      email: v.email ?? '',
      phone: v.phone ?? '',
      status: v.status ?? 'new',
      tags: v.tags ?? [],
      custom_fields: applyChanges({}, { set: v.customFields, remove: [] }),
    },
  };
}

function existingTarget(row: ContactRow): Target {
  const { id, name, email, phone, status, tags, custom_fields } = row;
  return { before: row, values: { id, name, email, phone, status, tags, custom_fields } };
}

/** The row's non-empty cells replace the contact's values; custom fields merge key by key. */
function applyRow(t: Target, v: RowValues) {
  if (v.name !== undefined) t.values.name = v.name;
  if (v.email !== undefined) t.values.email = v.email;
  if (v.phone !== undefined) t.values.phone = v.phone;
  if (v.status !== undefined) t.values.status = v.status;
  if (v.tags !== undefined) t.values.tags = v.tags;
  t.values.custom_fields = applyChanges(t.values.custom_fields, { set: v.customFields, remove: [] });
}

/**
 * Writes one batch in the caller's transaction: each valid row matches a contact by phone, then by email (the
 * org's contacts, or one an earlier row of the batch created), which it updates; otherwise it creates one. As the
 * single operations do, every created or changed contact gets an activity and a contact.created / contact.updated.
 */
async function writeBatch(tx: PoolClient, contacts: ContactWriter, orgId: string, valid: RowValues[]): Promise<{ created: number; updated: number }> {
  const phones = [...new Set(valid.map((v) => v.phone).filter((p): p is string => !!p))];
  const emails = [...new Set(valid.map((v) => v.email).filter((e): e is string => !!e))];
  const byPhone = new Map<string, Target>();
  const byEmail = new Map<string, Target>();
  // Several contacts can share an email: the oldest is the match (rows come in id order; created_at decides).
  const matched = (await lockImportMatches(tx, orgId, phones, emails)).sort((a, b) => a.created_at.getTime() - b.created_at.getTime());
  for (const row of matched) {
    const t = existingTarget(row);
    if (row.phone) byPhone.set(row.phone, t);
    if (row.email && !byEmail.has(row.email)) byEmail.set(row.email, t);
  }
  const targets: Target[] = [];
  let created = 0;
  let updated = 0;
  for (const v of valid) {
    let t = (v.phone ? byPhone.get(v.phone) : undefined) ?? (v.email ? byEmail.get(v.email) : undefined);
    if (t) {
      // A phone match wins; a row found by email brings a phone nobody in the org has (else that contact matched).
      if (v.phone && t.values.phone && t.values.phone !== v.phone && byPhone.get(t.values.phone) === t) byPhone.delete(t.values.phone);
      applyRow(t, v);
      updated++;
    } else {
      t = newTarget(v);
      created++;
    }
    if (!targets.includes(t)) targets.push(t);
    if (t.values.phone) byPhone.set(t.values.phone, t);
    if (t.values.email && !byEmail.has(t.values.email)) byEmail.set(t.values.email, t);
  }

  const toUpdate: ImportedChange[] = [];
  for (const t of targets) {
    if (!t.before) continue;
    const { changes: changed } = diff(t.before, {
      name: t.values.name,
      email: t.values.email,
      phone: t.values.phone,
      status: t.values.status,
      tags: t.values.tags,
      customFields: t.values.custom_fields,
    });
    if (changed.length > 0) toUpdate.push({ values: t.values, before: t.before, changes: changed });
  }
  await contacts.importBatch(
    tx,
    orgId,
    targets.filter((t) => !t.before).map((t) => t.values),
    toUpdate,
  );
  return { created, updated };
}

/** Thrown to roll a dry run back once its result is known. */
class DryRun extends Error {
  constructor(readonly result: { created: number; updated: number }) {
    super('dry run');
  }
}

const isPhoneRace = (err: unknown) => (err as { constraint?: string }).constraint === 'contacts_phone_uq';

/**
 * ImportContacts: one batch of CSV rows. Bad rows are reported (line, column, message) and skipped; the rest are
 * written in one transaction. A concurrent writer that takes a phone between the match and the insert makes the
 * batch run once more (its contact is then matched). A dry run does the same work and rolls it back.
 */
export async function importBatch(deps: Deps, ctx: OrgContext, req: crm.ImportContactsRequest__Output): Promise<ImportResult> {
  requireCan(ctx, 'contacts:import');
  const { orgId } = ctx;
  const rows = req.rows ?? [];
  if (rows.length > IMPORT_BATCH_MAX) throw invalid('rows', `must be at most ${IMPORT_BATCH_MAX} per call`);
  const defs: Map<string, FieldDef> = await fieldDefs(deps.pool, orgId);
  const errors: ImportError[] = [];
  const valid: RowValues[] = [];
  for (const row of rows) {
    const read = readRow(row, defs, deps.config.PHONE_DEFAULT_COUNTRY);
    if (read.values) valid.push(read.values);
    else errors.push(...read.errors);
  }
  const failed = rows.length - valid.length;
  if (valid.length === 0) return { created: 0, updated: 0, failed, errors };
  for (let attempt = 1; ; attempt++) {
    try {
      const counts = await withTransaction(deps.pool, async (tx) => {
        const result = await writeBatch(tx, deps.contactWriter.inTrace(ctx.traceparent), orgId, valid);
        if (req.dryRun) throw new DryRun(result);
        return result;
      });
      return { ...counts, failed, errors };
    } catch (err) {
      if (err instanceof DryRun) return { ...err.result, failed, errors };
      if (!isPhoneRace(err) || attempt >= 3) throw err;
    }
  }
}
