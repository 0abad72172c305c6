import type { Queryable } from '@crm/db';
import { OUTBOX_CHANNEL, type EventToSend } from '@crm/events';
import { activityText } from './activities.repo';
import { COLUMNS, type ContactRow, type NewContact, newContactValues } from './contacts.repo';

/** Scoring's part of the statement (scoring.repo's newContactStateSql), handed in so this module does not name its table. */
export interface NewContactStateSql {
  /** The condition the whole statement is made on: the org's baseScore is 0. `org`: the parameter holding the org. */
  baseScoreIsZero(org: string): string;
  /** The state row's insert from the contact CTE named `contact`, its tag snapshot in the parameter `tags`. */
  insert(contact: string, tags: string): string;
}

/**
 * A new contact, its `created` activity, its contact.created outbox row and its lead-scoring state row in one
 * statement: one round trip, outside any transaction (a statement is atomic on its own), where the same writes in a
 * transaction take six (BEGIN, four inserts, COMMIT). On this kind of machine a round trip costs more than the rows
 * in it (bench/npm-start: public creates).
 *
 * The event's data is the contact as toEventContact shows the inserted row: the caller builds it before the insert
 * (provisionalContactRow), and the statement puts in the three times only PostgreSQL knows, written as
 * Date.toISOString writes them; the times are kept to the millisecond, so the row read back shows the same ones. The
 * event occurred when the row was created: its occurredAt is the row's createdAt (analytics dates assignments by it).
 * Nothing is written (undefined) when the org's baseScore is not 0: that contact is scored the usual way, in a
 * transaction. A duplicate phone or an unknown statusId fails the statement as the plain insert does.
 */
export async function insertContactAlone(
  db: Queryable,
  c: NewContact,
  w: { activity: string; event: EventToSend; tags: string[]; state: NewContactStateSql },
): Promise<ContactRow | undefined> {
  const { rows } = await db.query<ContactRow & { woken: unknown }>({
    name: 'crm_contact_insert_alone',
    text: `WITH t AS (
             SELECT date_trunc('milliseconds', now()) AS at WHERE ${w.state.baseScoreIsZero('$2::uuid')}
           ), c AS (
             INSERT INTO contacts (id, org_id, name, email, phone, source, status, status_id, assigned_user_id, notes, tags, avatar,
                                   chatnet_uid, thread_types, deal_value, custom_fields, last_activity, created_at, updated_at)
             SELECT $1::uuid, $2::uuid, $3::text, $4::text, $5::text, $6::text, $7::text, $8::uuid, $9::uuid, $10::text, $11::text[],
                    $12::text, $13::text, $14::text[], $15::numeric, $16::jsonb, t.at, t.at, t.at
             FROM t
             RETURNING ${COLUMNS}
           ), activity AS (
             INSERT INTO contact_activities (org_id, contact_id, type, data, occurred_at)
             SELECT c.org_id, c.id, 'created', $17::text, c.created_at FROM c
           ), state AS (
             ${w.state.insert('c', '$18')}
           ), event AS (
             INSERT INTO outbox (id, type, org_id, occurred_at, data, traceparent, version)
             SELECT $19::uuid, $20::text, $21::text, c.created_at,
                    jsonb_set($22::jsonb, '{contact}', ($22::jsonb -> 'contact') || jsonb_build_object('createdAt', s.at, 'updatedAt', s.at, 'lastActivity', s.at)),
                    $23::text, $24::int
             FROM c, LATERAL (SELECT to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at) s
             RETURNING seq
           )
           SELECT c.*, (SELECT pg_notify('${OUTBOX_CHANNEL}', min(seq)::text) FROM event) AS woken FROM c`,
    values: [
      ...newContactValues(c),
      activityText(w.activity),
      w.tags,
      w.event.id,
      w.event.type,
      w.event.orgId,
      w.event.dataJson,
      w.event.traceparent,
      w.event.version,
    ],
  });
  if (rows.length === 0) return undefined;
  const { woken: _notify, ...row } = rows[0];
  return row;
}
