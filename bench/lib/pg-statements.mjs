// Where PostgreSQL's time goes, statement by statement, when the server has pg_stat_statements loaded (it is not
// by default: `ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`, restart PostgreSQL, then
// `CREATE EXTENSION pg_stat_statements` in the database `pool` connects to; undo all three after). The counters
// are the server's, shared by every database: reset them just before a measured run, read them right after.

/** Whether the extension is there to read; `pool` is a connection to the database it was created in. */
export async function statementsAvailable(pool) {
  const { rows } = await pool.query("SELECT 1 FROM pg_extension WHERE extname = 'pg_stat_statements'");
  return rows.length > 0;
}

export async function resetStatements(pool) {
  await pool.query('SELECT pg_stat_statements_reset()');
}

/**
 * The `top` statements of the databases in `dbs` (label → database name) by execution time, per unit of work:
 * `{ db, query, msPerUnit, callsPerUnit, walPerUnit }`. Execution time excludes planning and the client's side.
 */
export async function topStatements(pool, dbs, units, top = 8) {
  const { rows } = await pool.query(
    `SELECT d.datname, s.calls::float8 AS calls, s.total_exec_time AS ms, s.wal_records::float8 AS wal, regexp_replace(s.query, '\\s+', ' ', 'g') AS query
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
      WHERE d.datname = ANY($1) ORDER BY s.total_exec_time DESC LIMIT $2`,
    [Object.values(dbs), top],
  );
  const labelOf = new Map(Object.entries(dbs).map(([label, name]) => [name, label]));
  return rows.map((r) => ({
    db: labelOf.get(r.datname),
    query: r.query,
    msPerUnit: r.ms / units,
    callsPerUnit: r.calls / units,
    walPerUnit: r.wal / units,
  }));
}
