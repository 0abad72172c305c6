import type { Queryable } from '@crm/db';
import { messagingRules } from '@crm/validation';

export interface SurveyRow {
  id: string;
  rating: number | null;
  comment_done: boolean;
}

export interface NewSurvey {
  id: string;
  conversationId: string;
  chatnetAccountId: string;
  assigneeId: string | null;
}

/**
 * Conversations of one org closed and the org asks (one statement for them all, nothing when CSAT is off): a survey
 * and its question each, queued for the auto-message sender; `notifyChannel` is the auto messages' channel. A
 * conversation whose previous question is still waiting for its answer (closed, reopened by a person, closed again
 * within the window) is not asked twice.
 */
export async function ask(db: Queryable, orgId: string, surveys: NewSurvey[], notifyChannel: string): Promise<void> {
  if (surveys.length === 0) return;
  await db.query({
    name: 'msg_csat_ask',
    text: `WITH s AS (SELECT coalesce(csat_message, $6) AS question FROM inbox_settings WHERE org_id = $1 AND csat_enabled),
                t AS (SELECT * FROM unnest($2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[]) AS t (id, conversation_id, chatnet_account_id, assignee_id)
                      WHERE NOT EXISTS (SELECT 1 FROM csat_surveys o WHERE o.conversation_id = t.conversation_id AND o.rating IS NULL
                                          AND (o.asked_at IS NULL OR o.expires_at > now()))),
                survey AS (INSERT INTO csat_surveys (id, org_id, conversation_id, chatnet_account_id, assignee_id)
                           SELECT t.id, $1, t.conversation_id, t.chatnet_account_id, t.assignee_id FROM t, s RETURNING id, conversation_id),
                question AS (INSERT INTO auto_messages (id, org_id, conversation_id, kind, content)
                             SELECT survey.id, $1, survey.conversation_id, 'csat', s.question FROM s, survey RETURNING id)
           SELECT pg_notify('${notifyChannel}', '') FROM (SELECT 1 FROM question LIMIT 1) q`,
    values: [
      orgId,
      surveys.map((x) => x.id),
      surveys.map((x) => x.conversationId),
      surveys.map((x) => x.chatnetAccountId),
      surveys.map((x) => x.assigneeId),
      messagingRules.DEFAULT_CSAT_MESSAGE,
    ],
  });
}

/** The question went out (the auto-message sender's transaction): the survey is open for CSAT_WINDOW_HOURS from then. */
export async function markAsked(db: Queryable, id: string, askedAt: Date): Promise<void> {
  await db.query(`UPDATE csat_surveys SET asked_at = $2::timestamptz, expires_at = $2::timestamptz + $3::int * interval '1 hour' WHERE id = $1`, [
    id,
    askedAt,
    messagingRules.CSAT_WINDOW_HOURS,
  ]);
}

/** The conversation's survey still open for a rating or its comment at `at`, locked; undefined when none. */
export async function openSurvey(db: Queryable, orgId: string, conversationId: string, at: Date): Promise<SurveyRow | undefined> {
  const { rows } = await db.query<SurveyRow>(
    `SELECT id, rating, comment_done FROM csat_surveys
      WHERE org_id = $1 AND conversation_id = $2 AND asked_at IS NOT NULL AND asked_at <= $3 AND expires_at > $3 AND NOT comment_done
      ORDER BY asked_at DESC LIMIT 1 FOR UPDATE`,
    [orgId, conversationId, at],
  );
  return rows[0];
}

/** The rating (and a comment given with it): on the survey and, as the latest answer, on the conversation. */
export async function answer(
  db: Queryable,
  s: { id: string; conversationId: string; rating: number; comment: string | null; respondedAt: Date },
): Promise<void> {
  await db.query(`UPDATE csat_surveys SET rating = $2, comment = $3::text, responded_at = $4, comment_done = $3::text IS NOT NULL WHERE id = $1`, [
    s.id,
    s.rating,
    s.comment,
    s.respondedAt,
  ]);
  await db.query(`UPDATE conversations SET csat_rating = $2, csat_comment = $3, csat_responded_at = $4 WHERE id = $1`, [
    s.conversationId,
    s.rating,
    s.comment,
    s.respondedAt,
  ]);
}

export async function comment(db: Queryable, s: { id: string; conversationId: string; comment: string }): Promise<void> {
  await db.query(`UPDATE csat_surveys SET comment = $2, comment_done = true WHERE id = $1`, [s.id, s.comment]);
  await db.query(`UPDATE conversations SET csat_comment = $2 WHERE id = $1`, [s.conversationId, s.comment]);
}

/** The contact wrote something that is no rating: the survey is over, unanswered. */
export async function end(db: Queryable, id: string): Promise<void> {
  await db.query(`UPDATE csat_surveys SET expires_at = now(), comment_done = true WHERE id = $1`, [id]);
}

/** Questions asked in [from, to) and their answers, optionally of one assignee (at close) or account. */
export async function analytics(
  db: Queryable,
  orgId: string,
  f: { from: Date | null; to: Date | null; assigneeId: string | null; chatnetAccountId: string | null },
) {
  const { rows } = await db.query<{
    questions: number;
    responses: number;
    average: string | null;
    r1: number;
    r2: number;
    r3: number;
    r4: number;
    r5: number;
  }>(
    `SELECT count(*)::int AS questions, count(rating)::int AS responses, avg(rating)::text AS average,
            (count(*) FILTER (WHERE rating = 1))::int AS r1, (count(*) FILTER (WHERE rating = 2))::int AS r2,
            (count(*) FILTER (WHERE rating = 3))::int AS r3, (count(*) FILTER (WHERE rating = 4))::int AS r4,
            (count(*) FILTER (WHERE rating = 5))::int AS r5
       FROM csat_surveys
      WHERE org_id = $1 AND asked_at IS NOT NULL AND ($2::timestamptz IS NULL OR asked_at >= $2) AND ($3::timestamptz IS NULL OR asked_at < $3)
        AND ($4::uuid IS NULL OR assignee_id = $4) AND ($5::uuid IS NULL OR chatnet_account_id = $5)`,
    [orgId, f.from, f.to, f.assigneeId, f.chatnetAccountId],
  );
  return rows[0];
}
