// CPU by process, second by second, while a run goes on: where the time went in a window whose latency was high (a
// fault's recovery that took long), and whether the whole machine was slower then (its cores busy with something not
// ours, or taken by the host: steal, on a virtual machine). A figure per message cannot say when.
import { readFileSync } from 'node:fs';

/** The machine's CPU counters from /proc/stat (ticks over every core): busy (not idle, not waiting on I/O) and steal. */
function machineTicks() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = f;
  // user, nice, system, idle, iowait, irq, softirq, steal: the whole of the machine's time (guest time is inside user).
  return { busy: user + nice + system + irq + softirq, steal, all: f.slice(0, 8).reduce((a, b) => a + b, 0) };
}

/**
 * Samples `snapshot()` (cpuSnapshot's Map pid → [label, cpu seconds]) every `everyMs` from start() to stop();
 * window(from, to) (performance.now() times) gives each label's CPU over the samples between them as % of one core,
 * with the machine's busy and steal time as % of all its cores.
 */
export function cpuTimeline(snapshot, { everyMs = 1000 } = {}) {
  const samples = [];
  let timer;
  let stopped = false;
  const sample = async () => {
    const at = performance.now();
    const ticks = machineTicks();
    const cpu = await snapshot();
    samples.push({ at, ticks, cpu });
  };
  const loop = async () => {
    if (stopped) return;
    await sample().catch((err) => process.stderr.write(`[cpu-timeline] sample failed: ${err?.message}\n`));
    if (!stopped) timer = setTimeout(loop, everyMs);
  };
  return {
    start() {
      void loop();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await sample().catch(() => undefined);
    },
    /** % of one core by label, and the machine's busy / steal % of all cores, between two times (undefined: too few samples). */
    window(from, to) {
      const inside = samples.filter((s) => s.at >= from && s.at <= to);
      if (inside.length < 2) return undefined;
      const a = inside[0];
      const b = inside[inside.length - 1];
      const seconds = (b.at - a.at) / 1000;
      // Sample by sample, so a process that started inside the window counts: the PostgreSQL backends a pool opens
      // again after its connections were terminated (between the first and the last sample only, they were missing).
      const byLabel = {};
      for (let i = 1; i < inside.length; i++) {
        for (const [pid, [label, cpu]] of inside[i].cpu) {
          if (!Number.isFinite(cpu)) continue;
          const before = inside[i - 1].cpu.get(pid);
          const spent = before ? cpu - before[1] : cpu; // started since the previous sample: all its time is in here
          if (Number.isFinite(spent)) byLabel[label] = (byLabel[label] ?? 0) + (spent / seconds) * 100;
        }
      }
      const all = b.ticks.all - a.ticks.all;
      return {
        seconds,
        byLabel,
        busy: (100 * (b.ticks.busy - a.ticks.busy)) / all,
        steal: (100 * (b.ticks.steal - a.ticks.steal)) / all,
      };
    },
  };
}
