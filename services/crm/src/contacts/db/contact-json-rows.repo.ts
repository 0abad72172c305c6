import type { Queryable } from '@crm/db';

/**
 * A contact as a JSON object of every column ({column: value}, including columns added later): what a merge keeps of
 * the contact it removes, and what undoing it puts back exactly (same id, timestamps, score). Used by the merges
 * module (through the face) to read and lock, and by ContactWriter to write.
 */
export type ContactJsonRow = Record<string, unknown>;

/** The org's contacts among `ids` as JSON rows, locked in id order. */
export async function lockContactJsonRows(db: Queryable, orgId: string, ids: string[]): Promise<Map<string, ContactJsonRow>> {
  const { rows } = await db.query<{ row: ContactJsonRow }>(
    'SELECT to_jsonb(c) AS row FROM contacts c WHERE org_id = $1 AND id = ANY($2::uuid[]) ORDER BY id FOR UPDATE',
    [orgId, ids],
  );
  return new Map(rows.map((r) => [String(r.row.id), r.row]));
}

/** The contacts columns a row can be written with: every column but the generated ones (read once per process). */
let writable: Promise<string[]> | undefined;
function writableColumns(db: Queryable): Promise<string[]> {
  writable ??= db
    .query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns
       WHERE table_schema = current_schema() AND table_name = 'contacts' AND is_generated = 'NEVER' ORDER BY ordinal_position`,
    )
    .then((r) => r.rows.map((c) => c.column_name));
  writable.catch(() => (writable = undefined));
  return writable;
}

const quoted = (cols: string[]) => cols.map((c) => `"${c.replace(/"/g, '""')}"`).join(', ');

/** Put the org's contact back exactly as its JSON row holds it; a row of another org is refused. */
export async function insertContactJsonRow(db: Queryable, orgId: string, row: ContactJsonRow): Promise<void> {
  if (String(row.org_id).toLowerCase() !== orgId.toLowerCase()) throw new Error('A contact row is put back only into its own organization');
  const cols = quoted(await writableColumns(db));
  await db.query(`INSERT INTO contacts (${cols}) SELECT ${cols} FROM jsonb_populate_record(NULL::contacts, $1::jsonb)`, [JSON.stringify(row)]);
}

/** Set some columns of the org's contact from a JSON object of {column: value}; updatedAt moves when `touch`. */
export async function setContactJsonColumns(db: Queryable, orgId: string, id: string, values: ContactJsonRow, touch: boolean): Promise<void> {
  const allowed = new Set(await writableColumns(db));
  const cols = Object.keys(values).filter((c) => allowed.has(c) && c !== 'id' && c !== 'org_id');
  if (cols.length === 0) return;
  const list = quoted(cols);
  await db.query(
    `UPDATE contacts SET (${list}) = (SELECT ${list} FROM jsonb_populate_record(NULL::contacts, $3::jsonb))${touch ? ', updated_at = now()' : ''}
     WHERE org_id = $1 AND id = $2`,
    [orgId, id, JSON.stringify(values)],
  );
}
