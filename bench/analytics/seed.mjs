// Set-based seeding of crm's analytics read model for one organization: contacts (with their stages,
// assignments and conversions) and conversations of 20 messages each, written straight into the tables the
// analytics consumer maintains (analytics_*), as the consumer would leave them after the same events. The
// event path is not what this bench measures, and 1M events through RabbitMQ would take most of an hour here.
//
// Conversation shape (positions 0..21): messages 0-7 (episode 1: in, in, reply, reply twice), 8 archived,
// messages 9-20 (episode 2: the same three times), 21 archived for 80% of conversations. Response delays are
// log-normal around a minute (a long tail up to three days), other gaps are seconds to hours, episodes days
// apart. Conversations start over the first `days` − 32 days, so the last messages land just before now. Each
// conversation is answered by one user.

/** Seed `conversations` × 20 messages and `contacts` contacts for `orgId`. */
export async function seedAnalytics(db, { orgId, users, statusIds, conversations, contacts, bounds, days = 365 }) {
  await db.query('BEGIN');
  await db.query(
    `CREATE TEMP TABLE seed_msgs ON COMMIT DROP AS
     WITH raw AS (
       SELECT c, p, q, kind, now() - interval '1 day' * $2::int + interval '1 day' * ($2::int - 32) * rs AS start_at,
              CASE
                WHEN p = 0 THEN 0
                WHEN p IN (8, 21) THEN 3600e3 + random() * 23 * 3600e3
                WHEN p = 9 THEN 86400e3 + random() * 24 * 86400e3
                WHEN q % 4 = 1 THEN 10e3 + random() * 600e3
                -- Box-Muller: a normal deviate from two uniforms; delays log-normal, median one minute.
                WHEN q % 4 = 2 THEN least(3 * 86400e3, greatest(500, round(exp(ln(60000) + 1.6 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random())))))
                WHEN q % 4 = 3 THEN 5e3 + random() * 60e3
                ELSE 300e3 + random() * 12 * 3600e3
              END AS gap_ms
       FROM (SELECT c, random() AS rs FROM generate_series(1, $1::int) AS c) conv,
            generate_series(0, 21) AS p,
            LATERAL (SELECT CASE WHEN p < 8 THEN p WHEN p > 8 AND p < 21 THEN p - 9 END AS q) qq,
            LATERAL (SELECT CASE WHEN p IN (8, 21) THEN 3 WHEN q % 4 IN (0, 1) THEN 1 ELSE 2 END AS kind) kk
       -- One conversation in five stays open (no final archive).
       WHERE NOT (p = 21 AND c % 5 = 0)
     )
     SELECT c, p, q, kind, md5($3::text || ':' || c)::uuid AS conversation_id,
            date_trunc('milliseconds', start_at + interval '1 millisecond' * round(sum(gap_ms) OVER (PARTITION BY c ORDER BY p))) AS at
     FROM raw`,
    [conversations, days, orgId],
  );
  await db.query('CREATE INDEX ON seed_msgs (c, p)');
  await db.query('CREATE INDEX ON seed_msgs (conversation_id, p)');
  await db.query('ANALYZE seed_msgs');
  await db.query(
    `INSERT INTO analytics_items (org_id, item_id, conversation_id, at, kind, user_id)
     SELECT $1::uuid, gen_random_uuid(), conversation_id, at, kind, CASE WHEN kind = 2 THEN ($2::uuid[])[1 + c % array_length($2::uuid[], 1)] END
     FROM seed_msgs`,
    [orgId, users],
  );
  // A response per group of four (first inbound → first reply); the first of each episode is `first`.
  await db.query(
    `INSERT INTO analytics_durations (org_id, conversation_id, kind, first, started_at, ended_at, ms, bucket, user_id)
     SELECT $1::uuid, s.conversation_id, 1, s.q = 0, s.at, r.at, ms, width_bucket(ms, $3::bigint[]), ($2::uuid[])[1 + s.c % array_length($2::uuid[], 1)]
     FROM seed_msgs s JOIN seed_msgs r ON r.c = s.c AND r.p = s.p + 2,
          LATERAL (SELECT (extract(epoch FROM r.at - s.at) * 1000)::bigint AS ms) d
     WHERE s.kind = 1 AND s.q % 4 = 0
     UNION ALL
     SELECT $1::uuid, s.conversation_id, 2, false, s.at, a.at, ms, width_bucket(ms, $3::bigint[]), NULL
     FROM seed_msgs s JOIN seed_msgs a ON a.c = s.c AND a.p = CASE s.p WHEN 0 THEN 8 ELSE 21 END,
          LATERAL (SELECT (extract(epoch FROM a.at - s.at) * 1000)::bigint AS ms) d
     WHERE s.p IN (0, 9)`,
    [orgId, users, bounds],
  );
  // The state each conversation is left in: after its final archive nothing is open; an open conversation is in
  // episode 2, which had its first response and awaits nothing (its last message is a reply).
  await db.query(
    `INSERT INTO analytics_conversations (org_id, conversation_id, last_at, last_kind, last_item, episode_start, turn_start, episode_replied)
     SELECT $1::uuid, l.conversation_id, l.at, l.kind, l.item_id, CASE WHEN l.kind = 3 THEN NULL ELSE e.at END, NULL, l.kind <> 3
     FROM (SELECT DISTINCT ON (conversation_id) conversation_id, at, kind, item_id FROM analytics_items WHERE org_id = $1
           ORDER BY conversation_id, at DESC, kind DESC, item_id DESC) l
     JOIN seed_msgs e ON e.conversation_id = l.conversation_id AND e.p = 9`,
    [orgId],
  );
  // Every duration counts in its day and its month (unit 'd' / 'm').
  await db.query(
    `INSERT INTO analytics_histogram (org_id, unit, start, series, bucket, n, sum_ms)
     SELECT $1::uuid, u.unit, u.start, series, bucket, count(*), sum(ms)
     FROM analytics_durations d,
          LATERAL (VALUES (CASE WHEN d.kind = 2 THEN 3 ELSE 1 END), (CASE WHEN d.kind = 1 AND d.first THEN 2 END)) v(series),
          LATERAL (VALUES ('d'::"char", (d.ended_at AT TIME ZONE 'UTC')::date),
                          ('m'::"char", date_trunc('month', d.ended_at AT TIME ZONE 'UTC')::date)) u(unit, start)
     WHERE d.org_id = $1 AND series IS NOT NULL
     GROUP BY 1, 2, 3, 4, 5`,
    [orgId],
  );
  // Contacts: 35% stay new, 25% lead, then 15% / 10% / 5% through the custom stages in order, 10% customers
  // (who passed every stage); some of each become lost (not a stage). Created over the same days.
  await db.query(
    `INSERT INTO analytics_contacts (org_id, contact_id, created_at, snapshot_at, assigned_user_id, deal_value, reached_lead,
                                     reached_customer, reached_status_ids, converted_at, converted_by)
     SELECT $1::uuid, gen_random_uuid(), created_at, created_at, assignee, CASE WHEN r >= 90 THEN (n % 1000) * 10 + 99.5 ELSE 0 END,
            r >= 35, r >= 90,
            (SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM unnest($3::uuid[]) WITH ORDINALITY s(id, i)
             WHERE (r >= 60 AND i = 1) OR (r >= 75 AND i = 2) OR (r >= 85 AND i = 3)),
            CASE WHEN r >= 90 THEN created_at + interval '1 hour' * (n % 500) END,
            CASE WHEN r >= 90 THEN assignee END
     FROM generate_series(1, $4::int) AS n,
          LATERAL (SELECT (n * 7919) % 100 AS r,
                          date_trunc('milliseconds', now() - interval '1 day' * $5::int * random()) AS created_at,
                          ($2::uuid[])[1 + n % array_length($2::uuid[], 1)] AS assignee) x`,
    [orgId, users, statusIds, contacts, days],
  );
  await db.query(
    `INSERT INTO analytics_assignments (org_id, contact_id, user_id, at, credited)
     SELECT org_id, contact_id, assigned_user_id, created_at, converted_by IS NOT NULL FROM analytics_contacts WHERE org_id = $1 AND assigned_user_id IS NOT NULL`,
    [orgId],
  );
  await db.query(
    `INSERT INTO analytics_user_stats (org_id, unit, start, user_id, replies, responses, response_ms, assigned, converted)
     SELECT $1::uuid, u.unit, u.start, user_id, sum(replies), sum(responses), sum(response_ms), sum(assigned), sum(converted) FROM (
       SELECT at AS t, user_id, 1 AS replies, 0 AS responses, 0 AS response_ms, 0 AS assigned, 0 AS converted FROM analytics_items WHERE org_id = $1 AND kind = 2
       UNION ALL
       SELECT ended_at, user_id, 0, 1, ms, 0, 0 FROM analytics_durations WHERE org_id = $1 AND kind = 1
       UNION ALL
       SELECT at, user_id, 0, 0, 0, 1, credited::int FROM analytics_assignments WHERE org_id = $1
     ) x, LATERAL (VALUES ('d'::"char", (x.t AT TIME ZONE 'UTC')::date), ('m'::"char", date_trunc('month', x.t AT TIME ZONE 'UTC')::date)) u(unit, start)
     GROUP BY 1, 2, 3, 4`,
    [orgId],
  );
  await db.query(
    `INSERT INTO analytics_funnel_days (org_id, day, reached_lead, reached_customer, reached_status_ids, n)
     SELECT org_id, (created_at AT TIME ZONE 'UTC')::date, reached_lead, reached_customer, reached_status_ids, count(*)
     FROM analytics_contacts WHERE org_id = $1 GROUP BY 1, 2, 3, 4, 5`,
    [orgId],
  );
  await db.query('COMMIT');
  const { rows } = await db.query(
    `SELECT (SELECT count(*) FROM analytics_items WHERE org_id = $1 AND kind <> 3) AS messages,
            (SELECT count(*) FROM analytics_durations WHERE org_id = $1 AND kind = 1) AS responses,
            (SELECT count(*) FROM analytics_durations WHERE org_id = $1 AND kind = 2) AS resolutions,
            (SELECT count(*) FROM analytics_contacts WHERE org_id = $1) AS contacts,
            (SELECT count(*) FROM analytics_histogram WHERE org_id = $1) AS histogram_rows,
            (SELECT count(*) FROM analytics_funnel_days WHERE org_id = $1) AS funnel_rows`,
    [orgId],
  );
  return rows[0];
}
