// Counts a bench takes before and after its work, then divides by the units of work: statements per database
// (pg_stat_statements, read and never reset, so other runs on the server are left alone) and the services' own
// counters (gRPC calls served, events published and consumed) scraped from each process's /metrics listener.
import { execFileSync } from 'node:child_process';

/** pg_stat_statements rows of the databases in `dbs` (label → name); empty when the extension is not there. */
export async function statementSnapshot(pool, dbs) {
  try {
    const { rows } = await pool.query(
      `SELECT d.datname, s.queryid::text AS id, s.calls::float8 AS calls, s.total_exec_time + s.total_plan_time AS ms,
              regexp_replace(s.query, '\\s+', ' ', 'g') AS query
         FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = ANY($1)`,
      [Object.values(dbs)],
    );
    const label = new Map(Object.entries(dbs).map(([l, name]) => [name, l]));
    return new Map(rows.map((r) => [`${r.datname}/${r.id}`, { db: label.get(r.datname), calls: r.calls, ms: r.ms, query: r.query }]));
  } catch {
    return new Map();
  }
}

/** Statements per unit between two snapshots: a line per database (statements, transactions) and the `top` most frequent. */
export function statementsPerUnit(before, after, units, top) {
  const rows = [...after].map(([k, s]) => ({
    ...s,
    calls: (s.calls - (before.get(k)?.calls ?? 0)) / units,
    ms: (s.ms - (before.get(k)?.ms ?? 0)) / units,
  }));
  const live = rows.filter((r) => r.calls > 0);
  const byDb = new Map();
  for (const r of live) {
    const t = byDb.get(r.db) ?? { calls: 0, commits: 0 };
    t.calls += r.calls;
    if (r.query === 'COMMIT' || r.query.endsWith('; COMMIT')) t.commits += r.calls;
    byDb.set(r.db, t);
  }
  return {
    summary: [...byDb].map(([db, t]) => `${db}: ${t.calls.toFixed(2)} statements, ${t.commits.toFixed(2)} COMMITs`),
    top: live.sort((a, b) => b.calls - a.calls).slice(0, top),
  };
}

/** The loopback ports a process listens on. */
function listening(pid) {
  const out = execFileSync('ss', ['-ltnpH'], { encoding: 'utf8' });
  return [...out.matchAll(/^\S+\s+\d+\s+\d+\s+\S*:(\d+)\s.*pid=(\d+),/gm)].filter((m) => Number(m[2]) === pid).map((m) => m[1]);
}

const COUNTERS = /^(grpc_server_duration_seconds_count|amqp_messages_published_total|amqp_messages_consumed_total)\{([^}]*)\} (\d+)/;

/** Per process label: counter key → value, from whichever of its ports answers /metrics. */
export async function counterSnapshot(pids) {
  const out = new Map();
  await Promise.all(
    Object.entries(pids).map(async ([label, pid]) => {
      for (const port of listening(pid)) {
        const text = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(1000) })
          .then((r) => (r.ok ? r.text() : ''))
          .catch(() => '');
        for (const line of text.split('\n')) {
          const m = line.match(COUNTERS);
          if (!m) continue;
          const labels = Object.fromEntries([...m[2].matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
          const what =
            m[1] === 'grpc_server_duration_seconds_count'
              ? `gRPC ${labels.grpc_method}${labels.grpc_code === 'OK' ? '' : ` (${labels.grpc_code})`}`
              : m[1] === 'amqp_messages_published_total'
                ? `published ${labels.type}`
                : `consumed ${labels.queue?.split('.').slice(-2).join('.')}${labels.outcome === 'ack' ? '' : ` (${labels.outcome})`}`;
          const k = `${label}: ${what}`;
          out.set(k, (out.get(k) ?? 0) + Number(m[3]));
        }
      }
    }),
  );
  return out;
}

/** Counters per unit between two snapshots, as lines (`messaging: gRPC SendMessage 0.60`), the largest first. */
export function countersPerUnit(before, after, units) {
  return [...after]
    .map(([k, v]) => [k, (v - (before.get(k) ?? 0)) / units])
    .filter(([, v]) => v >= 0.01)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v.toFixed(2)}`);
}
