import { randomBytes } from 'node:crypto';
import { connectAdmin, type Queryable } from '@crm/db';
import type { Client } from 'pg';

/**
 * Test databases used again by later test files of the same run, instead of a copy of the migrated template per file
 * and a DROP at its end. Measured on the 2-core machine: a copy costs PostgreSQL 150-270 ms of CPU (CREATE DATABASE
 * writes the template's ~8 MB, nearly all system catalog, through the WAL) and a DROP 60 ms more, and every DROP
 * forces an immediate checkpoint that writes out every other test database's dirty pages: ~580 checkpoints writing
 * ~3.9 GB in one run of the suite. A used database is emptied instead (only the tables that hold rows are truncated)
 * and parked under its template's name, where the next file's createMigratedDatabase takes it.
 *
 * A database comes back only as its template made it: tables, views and sequences the template does not have are
 * dropped (the outbox and processed_events, which the services make at start, and any a test made); then its schema
 * (tables, columns, indexes, constraints, triggers, functions, types, policies, settings, grants, applied migrations)
 * must have the template's fingerprint, taken when the template was migrated and kept in the template's comment; its
 * tables are emptied, its sequences restarted, its planner and activity statistics cleared. Anything else (a test
 * altered the schema, the template had rows of its own, the server refused a step) and it is dropped as before. Names:
 *   <template>_p<hex>  parked, clean, free for any worker of the run to take (ALTER DATABASE ... RENAME: one taker wins);
 *   <template>_d<hex>  being cleaned (renamed first, so nothing holding the file's name can reconnect to it).
 * Both start with the template's name, so the run's teardown (and a later run's stale clean-up) drops them with it.
 */

/** PostgreSQL's limit on a database name (NAMEDATALEN - 1). */
const MAX_NAME = 63;
const SUFFIX_LENGTH = 2 + 6; // _p + 6 hex digits

/**
 * The schema of the connected database as one hash: everything a migration or a test could change outside table rows.
 * Computed on the template right after its migrations and on a database before it is parked again.
 */
const FINGERPRINT = `
WITH ns AS (SELECT oid, nspname FROM pg_namespace WHERE nspname !~ '^pg_' AND nspname <> 'information_schema')
SELECT md5(string_agg(x, E'\\n' ORDER BY x)) AS fingerprint FROM (
  SELECT format('n %s %s %s', n.nspname, n.nspowner, n.nspacl) FROM pg_namespace n JOIN ns USING (oid)
  UNION ALL
  SELECT format('r %s %s %s %s %s %s %s %s', c.oid::regclass, c.relkind, c.relowner, c.relacl, c.reloptions, c.relpersistence,
                c.relrowsecurity, c.relforcerowsecurity)
    FROM pg_class c JOIN ns ON ns.oid = c.relnamespace
  UNION ALL
  SELECT format('a %s %s %s %s %s %s %s', a.attrelid::regclass, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
                a.attgenerated, a.attidentity, pg_get_expr(d.adbin, d.adrelid))
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN ns ON ns.oid = c.relnamespace
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
   WHERE a.attnum > 0 AND NOT a.attisdropped
  UNION ALL
  SELECT format('i %s', pg_get_indexdef(i.indexrelid)) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN ns ON ns.oid = c.relnamespace
  UNION ALL
  SELECT format('c %s %s %s %s', co.conrelid::regclass, co.contypid::regtype, co.conname, pg_get_constraintdef(co.oid))
    FROM pg_constraint co JOIN ns ON ns.oid = co.connamespace
  UNION ALL
  SELECT format('t %s %s', pg_get_triggerdef(t.oid), t.tgenabled) FROM pg_trigger t WHERE NOT t.tgisinternal
  UNION ALL
  SELECT format('f %s %s %s %s', p.oid::regprocedure, p.proowner, p.proconfig, md5(p.prosrc)) FROM pg_proc p JOIN ns ON ns.oid = p.pronamespace
  UNION ALL
  SELECT format('v %s %s', c.oid::regclass, pg_get_viewdef(c.oid)) FROM pg_class c JOIN ns ON ns.oid = c.relnamespace WHERE c.relkind IN ('v', 'm')
  UNION ALL
  SELECT format('q %s %s %s %s %s', s.seqrelid::regclass, s.seqtypid, s.seqstart, s.seqincrement, s.seqcycle) FROM pg_sequence s
    JOIN pg_class c ON c.oid = s.seqrelid JOIN ns ON ns.oid = c.relnamespace
  UNION ALL
  SELECT format('y %s %s', t.oid::regtype, (SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid))
    FROM pg_type t JOIN ns ON ns.oid = t.typnamespace WHERE t.typtype IN ('e', 'd', 'r', 'm')
  UNION ALL
  SELECT format('p %s %s %s %s', pol.polrelid::regclass, pol.polname, pg_get_expr(pol.polqual, pol.polrelid), pol.polroles) FROM pg_policy pol
  UNION ALL
  SELECT format('w %s %s', r.ev_class::regclass, r.rulename) FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class
    JOIN ns ON ns.oid = c.relnamespace WHERE r.rulename <> '_RETURN'
  UNION ALL
  SELECT format('x %s %s', extname, extversion) FROM pg_extension
  UNION ALL
  SELECT format('e %s %s', evtname, evtenabled) FROM pg_event_trigger
  UNION ALL
  SELECT format('s %s %s', s.setrole, s.setconfig) FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
   WHERE d.datname = current_database()
  UNION ALL
  SELECT format('d %s %s %s', d.datdba, d.datconnlimit, d.datacl) FROM pg_database d WHERE d.datname = current_database()
  UNION ALL
  SELECT format('g %s %s %s %s', (SELECT count(*) FROM pg_default_acl), (SELECT count(*) FROM pg_largeobject_metadata),
                (SELECT count(*) FROM pg_publication), (SELECT count(*) FROM pg_statistic_ext))
  UNION ALL
  SELECT format('m %s', name) FROM schema_migrations
) s (x)`;

/** The relations a database has (tables, views, sequences): those a copy has beyond its template's are dropped before it is parked. */
const RELATIONS = `
SELECT c.oid::regclass::text AS name, c.relkind AS kind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f') AND NOT c.relispartition AND n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
 ORDER BY 1`;
const DROP_KIND: Record<string, string> = { r: 'TABLE', p: 'TABLE', f: 'FOREIGN TABLE', v: 'VIEW', m: 'MATERIALIZED VIEW', S: 'SEQUENCE' };

/** Whether the template itself is empty (no rows but its applied migrations, no sequence used): else its copies are not reused. */
const PRISTINE = `
SELECT NOT EXISTS (SELECT 1 FROM pg_sequences WHERE last_value IS NOT NULL AND schemaname !~ '^pg_') AS sequences_unused,
       (SELECT array_agg(c.oid::regclass::text) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE c.relkind = 'r' AND n.nspname !~ '^pg_' AND n.nspname <> 'information_schema' AND c.oid <> 'schema_migrations'::regclass) AS tables`;

/**
 * Empties the database in one round trip: truncates the tables that hold rows (an empty table is left alone: a
 * TRUNCATE makes new files for it and each of its indexes), restarts every sequence a test used, and clears the
 * planner's statistics and the activity counters a fresh copy would not have.
 */
const EMPTY = `
DO $$
DECLARE
  r regclass;
  filled boolean;
  full_tables text[] := '{}';
  s text;
BEGIN
  FOR r IN SELECT c.oid::regclass FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition AND n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
              AND c.oid <> 'schema_migrations'::regclass
  LOOP
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s)', r) INTO filled;
    IF filled THEN full_tables := full_tables || r::text; END IF;
  END LOOP;
  IF cardinality(full_tables) > 0 THEN
    EXECUTE 'TRUNCATE ' || array_to_string(full_tables, ', ') || ' RESTART IDENTITY CASCADE';
  END IF;
  FOR s IN SELECT format('%I.%I', schemaname, sequencename) FROM pg_sequences WHERE last_value IS NOT NULL AND schemaname !~ '^pg_' LOOP
    EXECUTE 'ALTER SEQUENCE ' || s || ' RESTART';
  END LOOP;
  DELETE FROM pg_statistic st USING pg_class c, pg_namespace n
   WHERE c.oid = st.starelid AND n.oid = c.relnamespace AND n.nspname !~ '^pg_' AND n.nspname <> 'information_schema';
  PERFORM pg_stat_reset();
END $$`;

const COMMENT_TAG = 'recyclable test template: ';

/** What a template's comment records of it: its schema's fingerprint and its relations. */
interface TemplateSchema {
  fingerprint: string;
  relations: string[];
}

/**
 * Marks a freshly migrated template (through a connection to it, before it is closed to connections) as one whose
 * copies may be reused: its comment records its schema (TemplateSchema). A template with rows is left unmarked.
 */
export async function markRecyclable(admin: Client, template: Queryable, templateName: string): Promise<void> {
  if (templateName.length + SUFFIX_LENGTH > MAX_NAME) return;
  const { rows } = await template.query<{ sequences_unused: boolean; tables: string[] | null }>(PRISTINE);
  if (!rows[0].sequences_unused) return;
  for (const table of rows[0].tables ?? []) {
    if ((await template.query(`SELECT 1 FROM ${table} LIMIT 1`)).rowCount) return;
  }
  const schema: TemplateSchema = {
    fingerprint: (await template.query<{ fingerprint: string }>(FINGERPRINT)).rows[0].fingerprint,
    relations: (await template.query<{ name: string }>(RELATIONS)).rows.map((r) => r.name),
  };
  const comment = `${COMMENT_TAG}${JSON.stringify(schema)}`.replace(/'/g, "''");
  await admin.query(`COMMENT ON DATABASE "${templateName}" IS '${comment}'`);
}

const schemas = new Map<string, Promise<TemplateSchema | undefined>>();

/** The template's schema from its comment (once per process and template); undefined: its copies are not reused. */
function templateSchema(admin: Client, template: string): Promise<TemplateSchema | undefined> {
  let known = schemas.get(template);
  if (!known) {
    known = admin
      .query<{ comment: string | null }>(`SELECT shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname = $1`, [template])
      .then(({ rows }) => {
        const comment = rows[0]?.comment;
        return comment?.startsWith(COMMENT_TAG) ? (JSON.parse(comment.slice(COMMENT_TAG.length)) as TemplateSchema) : undefined;
      });
    schemas.set(template, known);
    known.catch(() => schemas.delete(template));
  }
  return known;
}

const suffix = (kind: 'p' | 'd') => `_${kind}${randomBytes(3).toString('hex')}`;

/**
 * A parked copy of `template` renamed to `name` for a test file, or false when none is parked. Every worker may race
 * for the same one: ALTER DATABASE ... RENAME looks the name up again once it holds the database's lock, so a loser
 * finds it gone (3D000) and tries the next.
 */
export async function takeParked(admin: Client, template: string, name: string): Promise<boolean> {
  const { rows } = await admin.query<{ datname: string }>(
    `SELECT datname FROM pg_database WHERE starts_with(datname, $1) AND length(datname) = $2 ORDER BY random()`,
    [`${template}_p`, template.length + SUFFIX_LENGTH],
  );
  for (const { datname } of rows) {
    try {
      await admin.query(`ALTER DATABASE "${datname}" RENAME TO "${name}"`);
      return true;
    } catch {
      // Taken by another worker meanwhile (or held: 55006): the next one.
    }
  }
  return false;
}

/**
 * Parks the test database `name` (a copy of `template`) for a later file; when it may not be reused, answers
 * `parked: false` and the name to drop it by (it may have been renamed already).
 */
export async function park(
  admin: Client,
  urlFor: (database: string) => string,
  template: string,
  name: string,
): Promise<{ parked: true } | { parked: false; nameNow: string }> {
  const schema = await templateSchema(admin, template).catch(() => undefined);
  if (!schema) return { parked: false, nameNow: name };
  // A service or pool a test left open: gone, as a DROP ... WITH (FORCE) would do.
  await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
  const dirty = `${template}${suffix('d')}`;
  try {
    // Waits (up to 5 s) for the terminated sessions to go; from here nothing knows the database's name.
    await admin.query(`ALTER DATABASE "${name}" RENAME TO "${dirty}"`);
  } catch {
    return { parked: false, nameNow: name };
  }
  try {
    // connectAdmin: waits for room on a full server (beside `npm start`) and ignores the session's late 'error'.
    const db = await connectAdmin(urlFor(dirty));
    try {
      await db.query('SET statement_timeout = 15000');
      const prepared = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_prepared_xacts WHERE database = current_database()');
      if (prepared.rows[0].n > 0) return { parked: false, nameNow: dirty };
      // Tables the services make at start (the outbox, processed_events) and any a test made: a fresh copy has none.
      const known = new Set(schema.relations);
      const extra = (await db.query<{ name: string; kind: string }>(RELATIONS)).rows.filter((r) => !known.has(r.name));
      for (const r of extra) await db.query(`DROP ${DROP_KIND[r.kind]} IF EXISTS ${r.name} CASCADE`);
      if ((await db.query<{ fingerprint: string }>(FINGERPRINT)).rows[0].fingerprint !== schema.fingerprint) return { parked: false, nameNow: dirty };
      await db.query(EMPTY);
    } finally {
      await db.end();
    }
    await admin.query(`ALTER DATABASE "${dirty}" RENAME TO "${template}${suffix('p')}"`);
    return { parked: true };
  } catch {
    return { parked: false, nameNow: dirty };
  }
}
