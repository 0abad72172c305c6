import { iso, Queryable } from '@crm/db';
import { lockContactIds, orgContactsSql, setLeadScoresSql } from '../contacts';
import { DEFAULT_CONFIG, DecayInterval, INTERVAL_SECONDS, RuleFields, ScoringConfig } from './model';

/**
 * Scoring SQL. Every query filters on org_id (contact ids are checked against the org too). The contacts table is the
 * contacts module's: these statements reach it through that module's fragments and locks (issue #30 item 3).
 */

export interface ConfigRow {
  org_id: string;
  scoring_model: string;
  base_score: number;
  max_score: number;
  decay_rate: number;
  decay_interval: DecayInterval;
  high_value_threshold: number;
  version: number;
  recomputed_version: number;
  updated_at: Date;
}

const CONFIG_COLUMNS = `org_id, scoring_model, base_score, max_score, decay_rate, decay_interval, high_value_threshold,
  version, recomputed_version, updated_at`;

export function configOf(r: ConfigRow | undefined): ScoringConfig {
  if (!r) return { ...DEFAULT_CONFIG };
  return {
    scoringModel: r.scoring_model,
    baseScore: r.base_score,
    maxScore: r.max_score,
    decayRate: r.decay_rate,
    decayInterval: r.decay_interval,
    highValueThreshold: r.high_value_threshold,
  };
}

export async function findConfig(db: Queryable, orgId: string): Promise<ConfigRow | undefined> {
  const { rows } = await db.query<ConfigRow>({
    name: 'crm_scoring_config',
    text: `SELECT ${CONFIG_COLUMNS} FROM scoring_configs WHERE org_id = $1`,
    values: [orgId],
  });
  return rows[0];
}

/** Write the whole config (creating the org's row on first write) and ask for a recompute. */
export async function saveConfig(db: Queryable, orgId: string, c: ScoringConfig): Promise<ConfigRow> {
  const { rows } = await db.query<ConfigRow>({
    name: 'crm_scoring_config_save',
    text: `INSERT INTO scoring_configs (org_id, scoring_model, base_score, max_score, decay_rate, decay_interval, high_value_threshold)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (org_id) DO UPDATE SET scoring_model = EXCLUDED.scoring_model, base_score = EXCLUDED.base_score,
             max_score = EXCLUDED.max_score, decay_rate = EXCLUDED.decay_rate, decay_interval = EXCLUDED.decay_interval,
             high_value_threshold = EXCLUDED.high_value_threshold, version = scoring_configs.version + 1, updated_at = now()
           RETURNING ${CONFIG_COLUMNS}`,
    values: [orgId, c.scoringModel, c.baseScore, c.maxScore, c.decayRate, c.decayInterval, c.highValueThreshold],
  });
  return rows[0];
}

/** Rules changed: scores of the whole org are recomputed (the config row is created with defaults if missing). */
export async function requestRecompute(db: Queryable, orgId: string): Promise<void> {
  await db.query({
    name: 'crm_scoring_request_recompute',
    text: `INSERT INTO scoring_configs (org_id) VALUES ($1)
           ON CONFLICT (org_id) DO UPDATE SET version = scoring_configs.version + 1`,
    values: [orgId],
  });
}

// ---------------------------------------------------------------------------------------------- rules

export interface RuleRow {
  id: string;
  org_id: string;
  name: string;
  condition: string;
  value: string;
  points: number;
  weight: number;
  created_at: Date;
  updated_at: Date;
}

const RULE_COLUMNS = 'id, org_id, name, condition, value, points, weight, created_at, updated_at';

export function toRule(r: RuleRow) {
  return {
    id: r.id,
    name: r.name,
    condition: r.condition,
    value: r.value,
    points: r.points,
    weight: r.weight,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

export async function listRules(db: Queryable, orgId: string): Promise<RuleRow[]> {
  const { rows } = await db.query<RuleRow>({
    name: 'crm_scoring_rules',
    text: `SELECT ${RULE_COLUMNS} FROM scoring_rules WHERE org_id = $1 ORDER BY created_at, id`,
    values: [orgId],
  });
  return rows;
}

export async function findRule(db: Queryable, orgId: string, id: string, lock = false): Promise<RuleRow | undefined> {
  const { rows } = await db.query<RuleRow>({
    text: `SELECT ${RULE_COLUMNS} FROM scoring_rules WHERE id = $1 AND org_id = $2${lock ? ' FOR UPDATE' : ''}`,
    values: [id, orgId],
  });
  return rows[0];
}

export async function countRules(db: Queryable, orgId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>({
    name: 'crm_scoring_rules_count',
    text: 'SELECT count(*)::int AS n FROM scoring_rules WHERE org_id = $1',
    values: [orgId],
  });
  return rows[0].n;
}

export async function insertRule(db: Queryable, id: string, orgId: string, r: RuleFields): Promise<RuleRow> {
  const { rows } = await db.query<RuleRow>({
    name: 'crm_scoring_rule_insert',
    text: `INSERT INTO scoring_rules (id, org_id, name, condition, value, points, weight) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${RULE_COLUMNS}`,
    values: [id, orgId, r.name, r.condition, r.value, r.points, r.weight],
  });
  return rows[0];
}

export async function updateRule(db: Queryable, orgId: string, id: string, r: RuleFields): Promise<RuleRow | undefined> {
  const { rows } = await db.query<RuleRow>({
    name: 'crm_scoring_rule_update',
    text: `UPDATE scoring_rules SET name = $3, condition = $4, value = $5, points = $6, weight = $7, updated_at = now()
           WHERE id = $1 AND org_id = $2 RETURNING ${RULE_COLUMNS}`,
    values: [id, orgId, r.name, r.condition, r.value, r.points, r.weight],
  });
  return rows[0];
}

export async function deleteRule(db: Queryable, orgId: string, id: string): Promise<boolean> {
  const res = await db.query({
    name: 'crm_scoring_rule_delete',
    text: 'DELETE FROM scoring_rules WHERE id = $1 AND org_id = $2',
    values: [id, orgId],
  });
  return (res.rowCount ?? 0) > 0;
}

// ---------------------------------------------------------------------------------------------- per contact

export interface StateRow {
  contact_id: string;
  tags: string[] | null;
  tags_as_of: Date | null;
  scored_at: Date | null;
}

/**
 * Make sure the contacts have state rows, created from the contact (what subscribers last saw is its current
 * leadScore), and lock them, contact rows first, all in id order: one contact's events are scored one batch at
 * a time. Contacts that are not the org's (deleted, or never were) are left out.
 */
export async function lockStateRows(db: Queryable, orgId: string, contactIds: string[]): Promise<StateRow[]> {
  // The contact rows first, always (see lockContactIds), all in id order.
  const ids = await lockContactIds(db, orgId, contactIds);
  if (ids.length === 0) return [];
  await ensureStates(db, orgId, ids);
  const { rows } = await db.query<StateRow>({
    name: 'crm_scoring_state_rows_lock',
    text: `SELECT contact_id, tags, tags_as_of, scored_at FROM contact_score_state
           WHERE org_id = $1 AND contact_id = ANY($2::uuid[]) ORDER BY contact_id FOR UPDATE`,
    values: [orgId, ids],
  });
  return rows;
}

/**
 * State rows for contacts created in this transaction (their rows are locked by the insert, so nothing else can
 * reach them first), with the tag snapshot of their creation. With `scoredAtZero`, a contact whose leadScore is 0
 * is also marked scored (contribution 0 as of now): what scoring it would write when no fact of it counts and the
 * org's baseScore is 0. Returns the contacts that got a row, and which of them are scored; a contact that already
 * had a row gets none here (the caller scores it the usual way).
 */
export async function createStates(
  db: Queryable,
  orgId: string,
  created: Array<{ contactId: string; tags: string[]; asOf: Date }>,
  scoredAtZero: boolean,
): Promise<Array<{ contactId: string; scored: boolean }>> {
  const { rows } = await db.query<{ contact_id: string; scored: boolean }>({
    name: 'crm_scoring_state_create',
    text: `INSERT INTO contact_score_state (contact_id, org_id, published_score, tags, tags_as_of, contrib, computed_at, scored_at)
           SELECT c.id, c.org_id, c.lead_score, ARRAY(SELECT jsonb_array_elements_text(t.tags)), t.as_of, 0,
                  CASE WHEN $3 AND c.lead_score = 0 THEN now() END, CASE WHEN $3 AND c.lead_score = 0 THEN now() END
           FROM jsonb_to_recordset($2::jsonb) AS t(id uuid, tags jsonb, as_of timestamptz)
           JOIN ${orgContactsSql('$1')} ON c.id = t.id
           ORDER BY c.id
           ON CONFLICT (contact_id) DO NOTHING
           RETURNING contact_id, scored_at IS NOT NULL AS scored`,
    values: [orgId, JSON.stringify(created.map((c) => ({ id: c.contactId, tags: c.tags, as_of: c.asOf.toISOString() }))), scoredAtZero],
  });
  return rows.map((r) => ({ contactId: r.contact_id, scored: r.scored }));
}

/**
 * A new contact's state row as SQL fragments: the condition (the org's baseScore is 0, so the contact's score is the 0
 * it is created with), used by createStateIfBaseScoreZero below and by the contact writer's one-statement create
 * (ContactWriter.createAlone), which makes its whole statement on it; and the state row's insert from the contact
 * that statement inserts (`contact`: the name of its CTE, `tags`: the parameter holding the tag snapshot).
 */
export const newContactStateSql = {
  baseScoreIsZero: (org: string) =>
    `coalesce((SELECT base_score FROM scoring_configs WHERE org_id = ${org}), ${Number(DEFAULT_CONFIG.baseScore)}) = 0`,
  insert: (contact: string, tags: string) =>
    `INSERT INTO contact_score_state (contact_id, org_id, published_score, tags, tags_as_of, contrib, computed_at, scored_at)
     SELECT ${contact}.id, ${contact}.org_id, ${contact}.lead_score, ${tags}::text[], ${contact}.updated_at, 0, now(), now() FROM ${contact}`,
};

/**
 * createStates for one contact (every contact the API creates), scored at zero, and only when the org's baseScore
 * is 0: the config is read in the same statement. The contact is found by its primary key: the batch form's join is
 * planned once per connection for any batch size, and while the table is small that plan reads every contact of
 * the org (2 ms a call at 15,000 contacts, which was the largest cost of a created contact in bench/events).
 */
export async function createStateIfBaseScoreZero(
  db: Queryable,
  orgId: string,
  c: { contactId: string; tags: string[]; asOf: Date },
): Promise<Array<{ contactId: string; scored: boolean }>> {
  const { rows } = await db.query<{ contact_id: string; scored: boolean }>({
    name: 'crm_scoring_state_create_one',
    text: `INSERT INTO contact_score_state (contact_id, org_id, published_score, tags, tags_as_of, contrib, computed_at, scored_at)
           SELECT c.id, c.org_id, c.lead_score, $3::text[], $4::timestamptz, 0,
                  CASE WHEN c.lead_score = 0 THEN now() END, CASE WHEN c.lead_score = 0 THEN now() END
           FROM ${orgContactsSql('$1')}
           WHERE c.id = $2 AND ${newContactStateSql.baseScoreIsZero('$1')}
           ON CONFLICT (contact_id) DO NOTHING
           RETURNING contact_id, scored_at IS NOT NULL AS scored`,
    values: [orgId, c.contactId, c.tags, c.asOf],
  });
  return rows.map((r) => ({ contactId: r.contact_id, scored: r.scored }));
}

/** One contact's state row, locked as lockStateRows does. */
export async function lockState(db: Queryable, orgId: string, contactId: string): Promise<StateRow | undefined> {
  return (await lockStateRows(db, orgId, [contactId]))[0];
}

export async function ensureStates(db: Queryable, orgId: string, contactIds: string[]): Promise<void> {
  await db.query({
    name: 'crm_scoring_state_ensure',
    text: `INSERT INTO contact_score_state (contact_id, org_id, published_score)
           SELECT c.id, c.org_id, c.lead_score FROM ${orgContactsSql('$1')} WHERE c.id = ANY($2::uuid[])
           ON CONFLICT (contact_id) DO NOTHING`,
    values: [orgId, contactIds],
  });
}

/** Lock a batch's state rows in id order (the order every batch uses, so batches never deadlock each other). */
export async function lockStates(db: Queryable, orgId: string, contactIds: string[]): Promise<string[]> {
  contactIds = await lockContactIds(db, orgId, contactIds);
  const { rows } = await db.query<{ contact_id: string }>({
    name: 'crm_scoring_states_lock',
    text: 'SELECT contact_id FROM contact_score_state WHERE org_id = $1 AND contact_id = ANY($2::uuid[]) ORDER BY contact_id FOR UPDATE',
    values: [orgId, contactIds],
  });
  return rows.map((r) => r.contact_id);
}

/** When the contact's leadScore was computed for; null before scoring first saw the contact. */
export async function scoredAt(db: Queryable, orgId: string, contactId: string): Promise<Date | null> {
  const { rows } = await db.query<{ scored_at: Date | null }>({
    name: 'crm_scoring_scored_at',
    text: 'SELECT scored_at FROM contact_score_state WHERE contact_id = $1 AND org_id = $2',
    values: [contactId, orgId],
  });
  return rows[0]?.scored_at ?? null;
}

export async function saveTagSnapshot(db: Queryable, contactId: string, tags: string[], asOf: Date): Promise<void> {
  await db.query({
    name: 'crm_scoring_state_tags',
    text: 'UPDATE contact_score_state SET tags = $2, tags_as_of = $3 WHERE contact_id = $1',
    values: [contactId, tags, asOf],
  });
}

export interface FactRow {
  contactId: string;
  condition: string;
  value: string;
  bucket: Date;
  occurrences: number;
  lastAt: Date;
}

/**
 * Count facts of the org's contacts into their hour buckets, in one statement. The caller has merged the rows
 * of one bucket (a statement cannot update a row twice) and holds the contacts' state rows.
 */
export async function addFacts(db: Queryable, orgId: string, facts: FactRow[]): Promise<void> {
  if (facts.length === 0) return;
  await db.query({
    name: 'crm_scoring_facts_add',
    text: `INSERT INTO contact_score_facts (org_id, contact_id, condition, value, bucket, occurrences, last_at)
           SELECT $1, f.contact_id, f.condition, f.value, f.bucket, f.occurrences, f.last_at
           FROM unnest($2::uuid[], $3::text[], $4::text[], $5::timestamptz[], $6::int[], $7::timestamptz[]) AS f(contact_id, condition, value, bucket, occurrences, last_at)
           ON CONFLICT (contact_id, condition, value, bucket) DO UPDATE
             SET occurrences = contact_score_facts.occurrences + EXCLUDED.occurrences,
                 last_at = GREATEST(contact_score_facts.last_at, EXCLUDED.last_at)`,
    values: [
      orgId,
      facts.map((f) => f.contactId),
      facts.map((f) => f.condition),
      facts.map((f) => f.value),
      facts.map((f) => f.bucket),
      facts.map((f) => f.occurrences),
      facts.map((f) => f.lastAt),
    ],
  });
}

/** The SQL parameters every score computation shares. */
function scoreParams(c: ScoringConfig, asOf: Date) {
  return [c.decayRate, INTERVAL_SECONDS[c.decayInterval], asOf, c.baseScore, c.maxScore];
}

/** Decay factor of a fact row `f` with $3 = rate, $4 = interval seconds, $5 = as-of time. */
const DECAY = 'power(1 - $3::float8, greatest(0, extract(epoch FROM $5::timestamptz - f.last_at)) / $4::float8)';
/** clamp(base + x, 0, max), rounded half away from zero (numeric round), with $6 = base, $7 = max. */
const clampScore = (x: string) => `least(greatest(round(($6::int + ${x})::numeric), 0), $7::int)::int`;

/**
 * Recompute contacts' scores from their facts and the org's current rules, as of `asOf`. Writes
 * contacts.lead_score only where it changes (no dead rows for unchanged contacts) and the state's
 * contribution sum, which the decay sweep continues from. The state rows must be locked by the caller.
 */
export async function scoreContacts(db: Queryable, orgId: string, contactIds: string[], c: ScoringConfig, asOf: Date): Promise<void> {
  await db.query({
    name: 'crm_scoring_score_contacts',
    text: `WITH ids AS (SELECT unnest($2::uuid[]) AS id),
           contrib AS (
             SELECT f.contact_id, sum(f.occurrences * ${DECAY} * r.points * r.weight) AS pts
             FROM contact_score_facts f
             JOIN scoring_rules r ON r.org_id = f.org_id AND r.condition = f.condition AND (r.value = '' OR r.value = f.value)
             WHERE f.org_id = $1 AND f.contact_id = ANY($2::uuid[])
             GROUP BY f.contact_id),
           scored AS (
             SELECT ids.id, coalesce(contrib.pts, 0) AS pts, ${clampScore('coalesce(contrib.pts, 0)')} AS score
             FROM ids LEFT JOIN contrib ON contrib.contact_id = ids.id),
           changed AS (${setLeadScoresSql('$1', 'scored')})
           UPDATE contact_score_state st SET contrib = s.pts, computed_at = $5, scored_at = $5
           FROM scored s
           WHERE st.contact_id = s.id AND st.org_id = $1
             AND (s.pts <> 0 OR st.contrib <> 0 OR st.scored_at IS NULL OR s.id IN (SELECT id FROM changed))`,
    values: [orgId, contactIds, ...scoreParams(c, asOf)],
  });
}

/** The score a state row's stored contribution sum gives at $5 (see DECAY for the other parameters). */
const DECAYED_SCORE = clampScore(
  'st.contrib * power(1 - $3::float8, greatest(0, extract(epoch FROM $5::timestamptz - st.computed_at)) / $4::float8)',
);

/**
 * One keyset page of the decay sweep, read without locks: of the next `limit` contacts whose score still
 * decays, those whose leadScore would change at `asOf` (usually few: a score moves by a whole point now and
 * then). `lastId` continues the walk; null when the page was empty.
 */
export async function decayPage(
  db: Queryable,
  orgId: string,
  after: string | null,
  limit: number,
  c: ScoringConfig,
  asOf: Date,
): Promise<{ lastId: string | null; changing: string[] }> {
  const { rows } = await db.query<{ last_id: string | null; changing: string[] }>({
    name: 'crm_scoring_decay_page',
    text: `WITH st AS (
             SELECT contact_id, contrib, computed_at FROM contact_score_state
             WHERE org_id = $1 AND contrib <> 0 AND ($2::uuid IS NULL OR contact_id > $2::uuid)
             ORDER BY contact_id LIMIT $8)
           SELECT (SELECT contact_id FROM st ORDER BY contact_id DESC LIMIT 1) AS last_id,
                  ARRAY(SELECT st.contact_id FROM st JOIN ${orgContactsSql('$1', 't')} ON t.id = st.contact_id
                        WHERE st.computed_at IS NOT NULL AND t.lead_score <> ${DECAYED_SCORE}) AS changing`,
    values: [orgId, after, ...scoreParams(c, asOf), limit],
  });
  return { lastId: rows[0]?.last_id ?? null, changing: rows[0]?.changing ?? [] };
}

/** Lock these state rows, skipping those an event is scoring right now (it writes a fresh score anyway). */
export async function lockStatesSkipLocked(db: Queryable, orgId: string, contactIds: string[]): Promise<string[]> {
  contactIds = await lockContactIds(db, orgId, contactIds, true);
  const { rows } = await db.query<{ contact_id: string }>({
    name: 'crm_scoring_states_lock_skip',
    text: 'SELECT contact_id FROM contact_score_state WHERE org_id = $1 AND contact_id = ANY($2::uuid[]) ORDER BY contact_id FOR UPDATE SKIP LOCKED',
    values: [orgId, contactIds],
  });
  return rows.map((r) => r.contact_id);
}

/**
 * The decay sweep's write for locked contacts: the score at `asOf` follows from the stored contribution sum
 * (every contribution decays by the same factor), without reading facts. Returns the contacts whose
 * leadScore changed.
 */
export async function decayContacts(db: Queryable, orgId: string, contactIds: string[], c: ScoringConfig, asOf: Date): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>({
    name: 'crm_scoring_decay_contacts',
    text: `WITH s AS (
             SELECT st.contact_id AS id, ${DECAYED_SCORE} AS score
             FROM contact_score_state st WHERE st.org_id = $1 AND st.contact_id = ANY($2::uuid[]) AND st.computed_at IS NOT NULL),
           changed AS (${setLeadScoresSql('$1', 's')})
           UPDATE contact_score_state st SET scored_at = $5 FROM changed WHERE st.contact_id = changed.id RETURNING st.contact_id AS id`,
    values: [orgId, contactIds, ...scoreParams(c, asOf)],
  });
  return rows.map((r) => r.id);
}

/**
 * Of these contacts, those whose score subscribers should hear about (see publishRule): a move of `step`
 * since the last published score, reaching the threshold while not published as high, falling `hysteresis`
 * below it while published as high, or being on the other side of a threshold that changed since.
 */
export async function contactsToPublish(
  db: Queryable,
  orgId: string,
  contactIds: string[],
  rule: { step: number; hysteresis: number; threshold: number },
  crossingsOnly: boolean,
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>({
    name: 'crm_scoring_to_publish',
    text: `SELECT c.id FROM ${orgContactsSql('$1')} JOIN contact_score_state s ON s.contact_id = c.id
           WHERE c.id = ANY($2::uuid[]) AND (
             (NOT $6::bool AND abs(c.lead_score - s.published_score) >= $3)
             OR (c.lead_score >= $5 AND NOT s.published_high)
             OR (c.lead_score < $5 - $4 AND s.published_high)
             OR (s.published_threshold IS DISTINCT FROM $5 AND (c.lead_score >= $5) <> s.published_high))
           ORDER BY c.id`,
    values: [orgId, contactIds, rule.step, rule.hysteresis, rule.threshold, crossingsOnly],
  });
  return rows.map((r) => r.id);
}

export async function markPublished(db: Queryable, orgId: string, contactIds: string[], threshold: number): Promise<void> {
  await db.query({
    name: 'crm_scoring_mark_published',
    text: `UPDATE contact_score_state s SET published_score = c.lead_score, published_high = c.lead_score >= $3, published_threshold = $3
           FROM ${orgContactsSql('$1')} WHERE c.id = s.contact_id AND s.org_id = $1 AND s.contact_id = ANY($2::uuid[])`,
    values: [orgId, contactIds, threshold],
  });
}

export interface BreakdownRow {
  rule_id: string;
  rule_name: string;
  condition: string;
  value: string;
  points: number;
  weight: number;
  occurrences: number;
  decayed: number;
}

/** Per rule: matching occurrences and their decayed count as of `asOf` (rules without matches are left out). */
export async function breakdownOf(db: Queryable, orgId: string, contactId: string, c: ScoringConfig, asOf: Date): Promise<BreakdownRow[]> {
  const { rows } = await db.query<BreakdownRow>({
    name: 'crm_scoring_breakdown',
    text: `SELECT r.id AS rule_id, r.name AS rule_name, r.condition, r.value, r.points, r.weight,
                  sum(f.occurrences)::int AS occurrences, sum(f.occurrences * ${DECAY}) AS decayed
           FROM contact_score_facts f
           JOIN scoring_rules r ON r.org_id = f.org_id AND r.condition = f.condition AND (r.value = '' OR r.value = f.value)
           WHERE f.org_id = $1 AND f.contact_id = $2::uuid
           GROUP BY r.id ORDER BY r.created_at, r.id`,
    values: [orgId, contactId, c.decayRate, INTERVAL_SECONDS[c.decayInterval], asOf],
  });
  return rows;
}

// ---------------------------------------------------------------------------------------------- batches

/** Claim one org whose scores must be recomputed; the lease expires if this process dies mid-way. */
export async function claimRecompute(db: Queryable, leaseMs: number): Promise<ConfigRow | undefined> {
  const { rows } = await db.query<ConfigRow>({
    name: 'crm_scoring_claim_recompute',
    text: `UPDATE scoring_configs SET recompute_lease_until = now() + $1 * interval '1 millisecond'
           WHERE org_id = (SELECT org_id FROM scoring_configs
                           WHERE version > recomputed_version AND (recompute_lease_until IS NULL OR recompute_lease_until < now())
                           LIMIT 1 FOR UPDATE SKIP LOCKED)
           RETURNING ${CONFIG_COLUMNS}`,
    values: [leaseMs],
  });
  return rows[0];
}

export async function renewRecompute(db: Queryable, orgId: string, leaseMs: number): Promise<void> {
  await db.query({
    name: 'crm_scoring_renew_recompute',
    text: `UPDATE scoring_configs SET recompute_lease_until = now() + $2 * interval '1 millisecond' WHERE org_id = $1`,
    values: [orgId, leaseMs],
  });
}

/** Done up to `version`; a change made meanwhile left version higher, so the org is picked up again. */
export async function finishRecompute(db: Queryable, orgId: string, version: number): Promise<void> {
  await db.query({
    name: 'crm_scoring_finish_recompute',
    text: `UPDATE scoring_configs SET recomputed_version = GREATEST(recomputed_version, $2), recompute_lease_until = NULL WHERE org_id = $1`,
    values: [orgId, version],
  });
}

/** Claim one org whose decay sweep is due and schedule its next one. */
export async function claimSweep(db: Queryable, everyMs: number): Promise<ConfigRow | undefined> {
  const { rows } = await db.query<ConfigRow>({
    name: 'crm_scoring_claim_sweep',
    text: `UPDATE scoring_configs SET next_sweep_at = now() + $1 * interval '1 millisecond'
           WHERE org_id = (SELECT org_id FROM scoring_configs WHERE decay_rate > 0 AND next_sweep_at <= now()
                           ORDER BY next_sweep_at LIMIT 1 FOR UPDATE SKIP LOCKED)
           RETURNING ${CONFIG_COLUMNS}`,
    values: [everyMs],
  });
  return rows[0];
}

/** Delete up to `limit` facts last seen before `before` (their decayed weight is negligible). */
export async function pruneFacts(db: Queryable, orgId: string, before: Date, limit: number): Promise<number> {
  const res = await db.query({
    name: 'crm_scoring_prune_facts',
    text: `DELETE FROM contact_score_facts WHERE ctid = ANY(ARRAY(
             SELECT ctid FROM contact_score_facts WHERE org_id = $1 AND last_at < $2 LIMIT $3))`,
    values: [orgId, before, limit],
  });
  return res.rowCount ?? 0;
}
