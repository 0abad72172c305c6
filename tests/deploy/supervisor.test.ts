import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from '@crm/testing';

// npm start runs every service under scripts/supervisor.mjs: a service that crashes is started again with backoff,
// saying so, and the others keep running (before, one crash stopped the whole product).
const root = path.resolve(__dirname, '../..');

describe('npm start supervisor', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'supervisor-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('restarts a crashing child with growing delays while the other keeps running, and stops both', async () => {
    const starts = path.join(dir, 'starts.log');
    // "crasher" records each start, then exits 1 after 50 ms; "steady" records its start and stays up.
    writeFileSync(
      path.join(dir, 'child.js'),
      `require('fs').appendFileSync(${JSON.stringify(starts)}, process.argv[2] + ' ' + Date.now() + '\\n');
      if (process.argv[2] === 'crasher') setTimeout(() => process.exit(1), 50); else setInterval(() => {}, 1000);`,
    );
    writeFileSync(
      path.join(dir, 'run.mjs'),
      `import { createSupervisor } from ${JSON.stringify(path.join(root, 'scripts/supervisor.mjs'))};
       const s = createSupervisor({ minDelayMs: 200, maxDelayMs: 800 });
       for (const n of ['crasher', 'steady']) s.launch(n, process.execPath, [${JSON.stringify(path.join(dir, 'child.js'))}, n], {});
       process.on('SIGTERM', () => s.stop().then(() => process.exit(0)));`,
    );
    const proc = spawn(process.execPath, [path.join(dir, 'run.mjs')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    proc.stderr.on('data', (c) => (stderr += c));
    const lines = () =>
      readFileSync(starts, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(' '));
    try {
      const log = await eventually(async () => {
        const l = lines();
        return l.filter(([n]) => n === 'crasher').length >= 4 ? l : undefined;
      }, 10_000);
      const crashes = log.filter(([n]) => n === 'crasher').map(([, t]) => Number(t));
      const gaps = crashes.slice(1).map((t, i) => t - crashes[i]);
      // 200, 400, 800 ms after each 50 ms life (plus the start time of a node process).
      expect(gaps[0]).toBeGreaterThanOrEqual(240);
      expect(gaps[1]).toBeGreaterThanOrEqual(440);
      expect(gaps[2]).toBeGreaterThanOrEqual(840);
      expect(log.filter(([n]) => n === 'steady')).toHaveLength(1);
      expect(stderr).toContain('✗ crasher exited (1); restarting it in 0.2 s (the other services keep running).');
      expect(stderr).toContain('› Restarting crasher…');
      expect(stderr).not.toMatch(/steady exited/);
    } finally {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
    }
    expect(proc.exitCode).toBe(0);
    expect(stderr).not.toMatch(/steady exited/);
  }, 20_000);
});
