import { iso, Queryable } from '@crm/db';

interface TeamRow {
  id: string;
  name: string;
  description: string;
  created_at: Date;
  member_ids: string[];
}

function toTeam(r: TeamRow) {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    memberCount: r.member_ids.length,
    memberIds: r.member_ids,
    createdAt: iso(r.created_at),
  };
}

const SELECT = `SELECT t.id, t.name, t.description, t.created_at,
  COALESCE(array_agg(m.user_id ORDER BY m.user_id) FILTER (WHERE m.user_id IS NOT NULL), '{}') AS member_ids
  FROM teams t LEFT JOIN team_members m ON m.team_id = t.id`;

export async function listTeams(db: Queryable, orgId: string) {
  const { rows } = await db.query<TeamRow>(`${SELECT} WHERE t.org_id = $1 GROUP BY t.id ORDER BY t.created_at, t.id`, [orgId]);
  return rows.map(toTeam);
}

export async function getTeam(db: Queryable, orgId: string, id: string) {
  const { rows } = await db.query<TeamRow>(`${SELECT} WHERE t.org_id = $1 AND t.id = $2 GROUP BY t.id`, [orgId, id]);
  return rows[0] ? toTeam(rows[0]) : undefined;
}

export async function insertTeam(db: Queryable, t: { id: string; orgId: string; name: string; description: string }) {
  await db.query('INSERT INTO teams (id, org_id, name, description) VALUES ($1, $2, $3, $4)', [t.id, t.orgId, t.name, t.description]);
}

export async function updateTeam(db: Queryable, orgId: string, id: string, p: { name?: string; description?: string }): Promise<boolean> {
  const { rowCount } = await db.query(
    'UPDATE teams SET name = COALESCE($3, name), description = COALESCE($4, description) WHERE org_id = $1 AND id = $2',
    [orgId, id, p.name ?? null, p.description ?? null],
  );
  return rowCount === 1;
}

export async function setMembers(db: Queryable, teamId: string, userIds: string[]): Promise<void> {
  await db.query('DELETE FROM team_members WHERE team_id = $1', [teamId]);
  if (userIds.length) {
    await db.query('INSERT INTO team_members (team_id, user_id) SELECT $1, unnest($2::uuid[]) ON CONFLICT DO NOTHING', [teamId, userIds]);
  }
}

/** The deleted team's name, or undefined when the org has no such team. */
export async function deleteTeam(db: Queryable, orgId: string, id: string): Promise<string | undefined> {
  const { rows } = await db.query<{ name: string }>('DELETE FROM teams WHERE org_id = $1 AND id = $2 RETURNING name', [orgId, id]);
  return rows[0]?.name;
}
