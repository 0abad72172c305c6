// The process supervisor `npm start` runs every service and the gateway under.
import { spawn } from 'node:child_process';

/**
 * A child that crashes is started again (after `minDelayMs`, then doubling up to `maxDelayMs` while it keeps
 * crashing within `stableAfterMs` of its start) rather than taking the others down: a database failover or a
 * broker restart must not end the whole product. The others keep serving meanwhile, and the gateway answers 503
 * for what needs the missing one. Every line a child prints is prefixed with its name.
 */
export function createSupervisor({
  minDelayMs = 1000,
  maxDelayMs = 30_000,
  stableAfterMs = 60_000,
  out = process.stdout,
  err = process.stderr,
} = {}) {
  const children = new Map(); // name → the running child process
  const restarts = new Map(); // name → { delayMs, timer }
  let stopping = false;

  const pipe = (stream, to, prefix) => {
    let buf = '';
    stream.on('data', (chunk) => {
      buf += chunk;
      const lines = buf.split('\n');
      buf = lines.pop();
      for (const line of lines) to.write(prefix + line + '\n');
    });
  };

  /** Run `command args` as `name`, restarting it whenever it exits until stop(). */
  function launch(name, command, args, options) {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    const startedAt = Date.now();
    pipe(child.stdout, out, `[${name}] `);
    pipe(child.stderr, err, `[${name}] `);
    child.on('exit', (code, signal) => {
      if (stopping) return;
      const state = restarts.get(name) ?? { delayMs: minDelayMs };
      if (Date.now() - startedAt >= stableAfterMs) state.delayMs = minDelayMs;
      const wait = state.delayMs;
      state.delayMs = Math.min(state.delayMs * 2, maxDelayMs);
      err.write(`✗ ${name} exited (${signal ?? code}); restarting it in ${wait / 1000} s (the other services keep running).\n`);
      state.timer = setTimeout(() => {
        if (stopping) return;
        err.write(`› Restarting ${name}…\n`);
        launch(name, command, args, options);
      }, wait);
      restarts.set(name, state);
    });
    children.set(name, child);
    return child;
  }

  /** SIGTERM to every running child; resolves when all have exited (or after `boundMs`). */
  function stop(boundMs = 6000) {
    stopping = true;
    for (const r of restarts.values()) clearTimeout(r.timer);
    const running = [...children.values()].filter((c) => c.exitCode === null && c.signalCode === null);
    for (const c of running) c.kill('SIGTERM');
    const exited = Promise.all(running.map((c) => new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', r)))));
    return Promise.race([exited, new Promise((r) => setTimeout(r, boundMs).unref())]);
  }

  return {
    launch,
    stop,
    get stopping() {
      return stopping;
    },
  };
}
