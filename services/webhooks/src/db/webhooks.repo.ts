import type { Queryable } from '@crm/db';

export interface WebhookRow {
  id: string;
  org_id: string;
  url: string;
  events: string[];
  secret_enc: string;
  active: boolean;
  failing_since: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export async function list(db: Queryable, orgId: string): Promise<WebhookRow[]> {
  const { rows } = await db.query<WebhookRow>('SELECT * FROM webhook_settings WHERE org_id = $1 ORDER BY created_at, id', [orgId]);
  return rows;
}

export async function count(db: Queryable, orgId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>('SELECT count(*) AS n FROM webhook_settings WHERE org_id = $1', [orgId]);
  return rows[0].n;
}

export async function find(db: Queryable, orgId: string, id: string, forUpdate = false): Promise<WebhookRow | undefined> {
  const { rows } = await db.query<WebhookRow>(`SELECT * FROM webhook_settings WHERE org_id = $1 AND id = $2${forUpdate ? ' FOR UPDATE' : ''}`, [
    orgId,
    id,
  ]);
  return rows[0];
}

export async function insert(db: Queryable, w: { id: string; orgId: string; url: string; events: string[]; secretEnc: string }): Promise<WebhookRow> {
  const { rows } = await db.query<WebhookRow>(
    'INSERT INTO webhook_settings (id, org_id, url, events, secret_enc) VALUES ($1, $2, $3, $4, $5) RETURNING *',
    [w.id, w.orgId, w.url, w.events, w.secretEnc],
  );
  return rows[0];
}

export interface WebhookPatch {
  url?: string;
  events?: string[];
  secretEnc?: string;
  active?: boolean;
}

/** Apply only the given fields. Re-activating clears the failure run and the disable reason. */
export async function update(db: Queryable, orgId: string, id: string, p: WebhookPatch): Promise<WebhookRow | undefined> {
  const sets: string[] = [];
  const values: unknown[] = [orgId, id];
  const set = (col: string, v: unknown) => {
    values.push(v);
    sets.push(`${col} = $${values.length}`);
  };
  if (p.url !== undefined) set('url', p.url);
  if (p.events !== undefined) set('events', p.events);
  if (p.secretEnc !== undefined) set('secret_enc', p.secretEnc);
  if (p.active !== undefined) {
    set('active', p.active);
    if (p.active) sets.push('failing_since = NULL', 'disabled_at = NULL', 'disabled_reason = NULL');
    else sets.push('disabled_at = COALESCE(disabled_at, now())', "disabled_reason = COALESCE(disabled_reason, 'deactivated by a user')");
  }
  sets.push('updated_at = now()');
  const { rows } = await db.query<WebhookRow>(`UPDATE webhook_settings SET ${sets.join(', ')} WHERE org_id = $1 AND id = $2 RETURNING *`, values);
  return rows[0];
}

export async function remove(db: Queryable, orgId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM webhook_settings WHERE org_id = $1 AND id = $2', [orgId, id]);
  return (rowCount ?? 0) > 0;
}

/**
 * One more failed attempt: start the failure run if none is open and report how long it has lasted.
 * The row lock serialises concurrent failures of one endpoint, so only one of them disables it.
 */
export async function recordFailure(
  db: Queryable,
  id: string,
): Promise<{ active: boolean; failingForMs: number; url: string; orgId: string } | undefined> {
  const { rows } = await db.query<{ active: boolean; failing_ms: number; url: string; org_id: string }>(
    `UPDATE webhook_settings SET failing_since = COALESCE(failing_since, now()) WHERE id = $1
     RETURNING active, url, org_id, (extract(epoch FROM now() - failing_since) * 1000)::float8 AS failing_ms`,
    [id],
  );
  const r = rows[0];
  return r && { active: r.active, failingForMs: r.failing_ms, url: r.url, orgId: r.org_id };
}

export async function disable(db: Queryable, id: string, reason: string): Promise<void> {
  await db.query('UPDATE webhook_settings SET active = false, disabled_at = now(), disabled_reason = $2, updated_at = now() WHERE id = $1', [
    id,
    reason,
  ]);
}
