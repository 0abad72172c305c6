// bench/realtime --faults: when the path counts as back under its normal p99 after a fault.
//
// Two earlier yardsticks failed runs with nothing wrong in them:
// - "the window's p99 ≤ the normal p99": the p99 of a window of normal messages is itself a random number, above the
//   normal p99 about half the time (37-57% in a simulation, by window size);
// - an exact test of the window's count of messages above the normal p99 against as many normal messages drawn one by
//   one: latencies come in clusters (a garbage collection, a checkpoint, a busy second of the host delays every message
//   in flight at once), so a stretch of a fault-free run fails it. With --fault-control (the faults' schedule with no
//   fault done) it failed 2 runs of 2 on 2026-12-06, at a different second each time.
// So the yardstick is fault-free runs at the same rate, as long together as the faults' run, in the same run, one just
// before it and one just after (the machine drifts over minutes: the seconds of one run were 10% slower or faster than
// the run before it, faults or none, on 2026-12-06): the normal p99 is their p99, and a window after a fault is back
// under it when no larger share of its messages go over it than in the worst stretch of as many seconds of those runs
// (their clusters included). A fault that leaves the path slow for seconds puts most of a window's messages over the
// p99, far beyond any normal stretch.

/**
 * The yardstick of fault-free runs: each `{ entries, started, seconds }`, its messages as [sent at (ms), latency (ms)],
 * when its sending began and how long it sent. `judge(window, lengthMs)` says whether a window's latencies (sent over
 * `lengthMs`) are back under their p99.
 */
export function recoveryYardstick(runs) {
  const sorted = Float64Array.from(runs.flatMap((r) => r.entries.map(([, ms]) => ms))).sort();
  const p99 = sorted[Math.min(sorted.length - 1, Math.floor(0.99 * sorted.length))];
  const shareOver = (latencies) => latencies.filter((ms) => ms > p99).length / latencies.length;
  const worst = new Map();
  /** The largest share over the p99 among the runs' stretches of `length` whole seconds (one per starting second). */
  const worstStretch = (length) => {
    if (!worst.has(length)) {
      let max = 0;
      for (const { entries, started, seconds } of runs) {
        for (let s = 0; s + length <= seconds; s++) {
          const from = started + s * 1000;
          const stretch = entries.filter(([t]) => t >= from && t < from + length * 1000).map(([, ms]) => ms);
          if (stretch.length) max = Math.max(max, shareOver(stretch));
        }
      }
      worst.set(length, max);
    }
    return worst.get(length);
  };
  const longest = Math.max(...runs.map((r) => r.seconds));
  return {
    p99,
    /** The share of a window's latencies over the p99, and the worst share of the fault-free stretches of its length. */
    judge(window, lengthMs) {
      const length = Math.min(longest, Math.max(1, Math.ceil(lengthMs / 1000)));
      const share = window.length ? shareOver(window) : 0;
      const normalWorst = worstStretch(length);
      return { share, normalWorst, backUnder: window.length > 0 && share <= normalWorst };
    },
  };
}
