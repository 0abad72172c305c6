import { randomUUID } from 'node:crypto';
import type { AuditRecorded } from '@crm/events';
import { escapeLike, iso, offsetOf, pagination, Queryable } from '@crm/db';

interface AuditRow {
  id: string;
  actor_id: string | null;
  actor_type: string;
  action: string;
  resource_type: string;
  resource_id: string | null;
  details: Record<string, unknown>;
  ip: string | null;
  request_id: string | null;
  created_at: Date;
}

/** Proto has no free-form object: details cross gRPC as JSON text and the gateway parses them back. */
function toEntry(r: AuditRow) {
  return {
    id: r.id,
    actorId: r.actor_id ?? '',
    actorType: r.actor_type,
    action: r.action,
    resourceType: r.resource_type,
    resourceId: r.resource_id ?? '',
    detailsJson: JSON.stringify(r.details ?? {}),
    ip: r.ip ?? '',
    requestId: r.request_id ?? '',
    createdAt: iso(r.created_at),
  };
}

/**
 * Insert one entry. `id` is the event id for entries from the bus (a redelivery is then a no-op) and
 * `createdAt` the moment the change happened, not when the entry arrived.
 */
export async function insertEntry(db: Queryable, orgId: string, e: AuditRecorded, opts: { id?: string; createdAt?: string } = {}): Promise<void> {
  await db.query(
    `INSERT INTO audit_log (id, org_id, actor_id, actor_type, action, resource_type, resource_id, details, ip, request_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, COALESCE($11::timestamptz, now()))
     ON CONFLICT (id) DO NOTHING`,
    [
      opts.id ?? randomUUID(),
      orgId,
      e.actorId,
      e.actorType,
      e.action,
      e.resourceType,
      e.resourceId,
      JSON.stringify(e.details ?? {}),
      e.ip,
      e.requestId,
      opts.createdAt ?? null,
    ],
  );
}

export interface AuditFilter {
  page: number;
  limit: number;
  actorId?: string;
  /** Exact action, or `prefix.*` for every action starting with `prefix.`. */
  action?: string;
  dateFrom?: string;
  dateTo?: string;
}

export async function listEntries(db: Queryable, orgId: string, f: AuditFilter) {
  const where = ['org_id = $1'];
  const args: unknown[] = [orgId];
  const add = (sql: string, v: unknown) => {
    args.push(v);
    where.push(sql.replace('?', `$${args.length}`));
  };
  if (f.actorId) add('actor_id = ?', f.actorId);
  if (f.action?.endsWith('.*')) add('action LIKE ?', `${escapeLike(f.action.slice(0, -1))}%`);
  else if (f.action) add('action = ?', f.action);
  if (f.dateFrom) add('created_at >= ?', f.dateFrom);
  if (f.dateTo) add('created_at < ?', f.dateTo);
  const whereSql = where.join(' AND ');
  const total = (await db.query<{ n: string }>(`SELECT count(*) AS n FROM audit_log WHERE ${whereSql}`, args)).rows[0].n;
  const { rows } = await db.query<AuditRow>(
    `SELECT * FROM audit_log WHERE ${whereSql} ORDER BY created_at DESC, id DESC LIMIT ${f.limit} OFFSET ${offsetOf(f)}`,
    args,
  );
  return { data: rows.map(toEntry), pagination: pagination(f, Number(total)) };
}

/** Delete up to `batch` entries older than `days` days (all organizations); returns how many went. */
export async function deleteOlderThan(db: Queryable, days: number, batch: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM audit_log WHERE id IN (
       SELECT id FROM audit_log WHERE created_at < now() - $1 * interval '1 day' LIMIT $2
     )`,
    [days, batch],
  );
  return rowCount ?? 0;
}
