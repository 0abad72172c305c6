// CPU time from /proc (Linux): what each process of a run used, so a figure per message does not depend on how
// busy the machine was. PostgreSQL backends are found through pg_stat_activity by database; RabbitMQ (beam.smp)
// and Redis (redis-server) by their command name, since they serve every run on the machine.
import { readFileSync, readdirSync } from 'node:fs';

const TICKS = 100;

export function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return NaN;
  }
}

/** Pids whose command name (/proc/<pid>/comm) is `name`. */
export function pidsNamed(name) {
  const out = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/comm`, 'utf8').trim() === name) out.push(Number(d));
    } catch {
      /* gone */
    }
  }
  return out;
}

/**
 * A snapshot: Map pid → [label, cpu seconds]. `processes` maps labels to pids; `dbs` maps labels to database
 * names whose backends are counted as `pg <label>` (queried through `pool`, any database on the server).
 */
export async function cpuSnapshot({ processes, dbs = {}, pool, shared = true }) {
  const out = new Map();
  for (const [label, pid] of Object.entries(processes)) out.set(pid, [label, cpuSeconds(pid)]);
  if (pool && Object.keys(dbs).length) {
    const { rows } = await pool.query('SELECT pid, datname FROM pg_stat_activity WHERE datname = ANY($1)', [Object.values(dbs)]);
    for (const r of rows) {
      const label = Object.keys(dbs).find((k) => dbs[k] === r.datname);
      out.set(r.pid, [`pg ${label}`, cpuSeconds(r.pid)]);
    }
  }
  if (shared) {
    for (const pid of pidsNamed('beam.smp')) out.set(pid, ['rabbitmq', cpuSeconds(pid)]);
    for (const pid of pidsNamed('redis-server')) out.set(pid, ['redis', cpuSeconds(pid)]);
  }
  const u = process.cpuUsage();
  out.set(process.pid, ['load generator', (u.user + u.system) / 1e6]);
  return out;
}

/**
 * CPU ms per unit by label between two snapshots; a process that ended in between is left out (its time is lost).
 * `countStarted`: a process that started in between counts all its time (a PostgreSQL backend a pool opened during
 * the run); without it, it is left out too.
 */
export function cpuPerUnit(before, after, units, { countStarted = false } = {}) {
  const sums = {};
  for (const [pid, [label, cpu]] of after) {
    sums[label] ??= 0;
    if (!Number.isFinite(cpu)) continue;
    if (before.has(pid)) sums[label] += cpu - before.get(pid)[1];
    else if (countStarted) sums[label] += cpu;
  }
  return Object.fromEntries(Object.entries(sums).map(([l, s]) => [l, units > 0 ? (s * 1000) / units : NaN]));
}

/**
 * Committed transactions per database (pg_stat_database.xact_commit), labelled like `dbs`. On this 2-core box a
 * round trip to PostgreSQL costs more than the rows it carries, so transactions per message is the figure to watch.
 * PostgreSQL flushes these counters about once a second: take the second snapshot after the work has settled.
 */
export async function commitSnapshot({ dbs, pool }) {
  const { rows } = await pool.query('SELECT datname, xact_commit::float8 AS n FROM pg_stat_database WHERE datname = ANY($1)', [Object.values(dbs)]);
  return Object.fromEntries(Object.keys(dbs).map((label) => [label, rows.find((r) => r.datname === dbs[label])?.n ?? NaN]));
}

/** Transactions per unit by label between two commitSnapshot()s. */
export function commitsPerUnit(before, after, units) {
  return Object.fromEntries(Object.keys(after).map((l) => [l, units > 0 ? (after[l] - before[l]) / units : NaN]));
}
