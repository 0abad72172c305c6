// bench/realtime --faults: when the path counts as back under its normal p99 after a fault.
//
// The p99 of a window of messages drawn from the normal distribution is itself a random number, above the normal run's
// own p99 about half the time: judged by "the window's p99 ≤ the normal p99", fault-free windows failed about as often
// as they passed (37-57% in a simulation, by window size; a run on 2026-12-06 missed against a normal p99 of 63.6 ms
// while a timeline run showed every second's p50 back to normal 1-3 s after each fault).
// What can be checked is whether the messages after a fault go over the normal p99 more often than normal messages
// do: the number of a window's messages above it is compared with what a window of as many normal messages gives.

/**
 * Whether `window` (latencies after a fault) is back under the normal p99 of `sortedNormal` (the normal run's
 * latencies, sorted): the window's count of latencies above the normal p99 is not higher than normal windows of its
 * size reach more than 5 times in 100. Exact and distribution-free: when both samples come from one distribution,
 * the number C of the window's n values above the j-th largest of N normal values has
 * P(C = c) = C(j-1+c, c) · C(N-j+n-c, n-c) / C(N+n, n).
 */
export function backUnderNormal(sortedNormal, window) {
  const N = sortedNormal.length;
  const at = Math.min(N - 1, Math.floor(0.99 * N)); // where pct(…, 99) reads the normal p99
  const p99 = sortedNormal[at];
  const j = N - at; // the normal p99 is the j-th largest normal latency
  const over = window.filter((ms) => ms > p99).length;
  return exceedanceTail(N, j, window.length, over) >= 0.05;
}

/** P(C ≥ c) for the exceedance count above (log space: N and n are a few thousand at most). */
export function exceedanceTail(N, j, n, c) {
  const lnC = (a, b) => lnFact(a) - lnFact(b) - lnFact(a - b);
  const total = lnC(N + n, n);
  let tail = 0;
  for (let k = c; k <= n; k++) tail += Math.exp(lnC(j - 1 + k, k) + lnC(N - j + n - k, n - k) - total);
  return Math.min(1, tail);
}

const lnFactCache = [0];
function lnFact(x) {
  for (let i = lnFactCache.length; i <= x; i++) lnFactCache[i] = lnFactCache[i - 1] + Math.log(i);
  return lnFactCache[x];
}
