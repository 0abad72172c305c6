// Summarise every .cpuprofile in a folder together: busy time by package and by function, and the time spent under
// the functions named (inclusive: e.g. requireModuleOrMock for module loading in jest, jsonSchema, loadSync).
// Usage: node bench/lib/profile-folder.mjs <folder> [name ...]
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { packageOf } from './profile-package.mjs';

const [dir, ...names] = process.argv.slice(2);
let total = 0;
const byPackage = new Map();
const byFunction = new Map();
const under = Object.fromEntries(names.map((n) => [n, 0]));
const add = (map, key, t) => map.set(key, (map.get(key) ?? 0) + t);
for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
  const prof = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map();
  for (let i = 0; i < prof.samples.length; i++) add(self, prof.samples[i], prof.timeDeltas[i] ?? 0);
  for (const [id, t] of self) {
    total += t;
    const cf = byId.get(id).callFrame;
    add(byPackage, cf.url ? packageOf(cf.url) : cf.functionName, t);
    add(byFunction, `${cf.functionName || '(anonymous)'} ${cf.url.split('/').slice(-2).join('/')}:${cf.lineNumber + 1}`, t);
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const frame = byId.get(cur).callFrame;
      const key = `${frame.functionName}@${frame.url}`;
      for (const name of names) if (!seen.has(name) && key.includes(name)) ((under[name] += t), seen.add(name));
    }
  }
}
const idle = byPackage.get('(idle)') ?? 0;
const busy = total - idle;
const line = (t, label) => `${(t / 1e6).toFixed(1).padStart(8)} s ${((100 * t) / busy).toFixed(1).padStart(5)}%  ${label}`;
console.log(`sampled ${(total / 1e6).toFixed(0)} s, busy ${(busy / 1e6).toFixed(0)} s (percentages are of busy time)`);
for (const [name, t] of Object.entries(under)) console.log(line(t, `under ${name}`));
console.log('-- by package');
for (const [k, t] of [...byPackage]
  .filter(([k]) => k !== '(idle)')
  .sort((a, b) => b[1] - a[1])
  .slice(0, 25))
  console.log(line(t, k));
console.log('-- by function');
for (const [k, t] of [...byFunction]
  .filter(([k]) => !k.startsWith('(idle)'))
  .sort((a, b) => b[1] - a[1])
  .slice(0, 30))
  console.log(line(t, k));
