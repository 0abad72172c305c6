// Summarise a V8 .cpuprofile (node --cpu-prof): self time by function and by package, the biggest first.
// Usage: node bench/lib/profile-summary.mjs <file.cpuprofile> [--top 40]
import { readFileSync } from 'node:fs';
import { packageOf } from './profile-package.mjs';

const [file, , topArg] = process.argv.slice(2);
const top = Number(topArg ?? 40);
const prof = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const self = new Map();
for (let i = 0; i < prof.samples.length; i++) {
  const dt = prof.timeDeltas[i] ?? 0;
  self.set(prof.samples[i], (self.get(prof.samples[i]) ?? 0) + dt);
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
const fnTotals = new Map();
const pkgTotals = new Map();
for (const [id, t] of self) {
  const n = byId.get(id);
  const cf = n.callFrame;
  const key = `${cf.functionName || '(anon)'} ${cf.url.split('/').slice(-2).join('/')}:${cf.lineNumber + 1}`;
  fnTotals.set(key, (fnTotals.get(key) ?? 0) + t);
  const pkg = cf.url ? packageOf(cf.url) : cf.functionName;
  pkgTotals.set(pkg, (pkgTotals.get(pkg) ?? 0) + t);
}
const pct = (t) => ((100 * t) / total).toFixed(1).padStart(5) + '%';
console.log(`total sampled ${(total / 1000).toFixed(0)} ms`);
console.log('\n-- by package --');
for (const [k, t] of [...pkgTotals].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(pct(t), k);
console.log('\n-- by function (self) --');
for (const [k, t] of [...fnTotals].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(pct(t), k);
