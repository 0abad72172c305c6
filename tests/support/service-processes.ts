import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');

/**
 * Services started as their own processes, from their built `dist/main.js`, as `npm start` runs them: for what the
 * in-process stack (stack.ts) cannot show, such as a service's own telemetry set-up. Nothing is exported whatever the
 * environment running the tests says (OTEL_* variables are not passed on) unless `env` sets it.
 */
export class ServiceProcesses {
  private readonly procs: ChildProcess[] = [];

  /**
   * Start `service` and resolve once its output includes `readyText`; `onLine` gets each JSON log line it writes.
   * Rejects when it exits first, with what it wrote.
   */
  launch(service: string, env: Record<string, string>, readyText: string, onLine?: (line: Record<string, unknown>) => void): Promise<void> {
    return new Promise((resolve, reject) => {
      const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
      const p = spawn(process.execPath, [path.join(root, 'services', service, 'dist', 'main.js')], {
        env: { ...inherited, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      this.procs.push(p);
      let out = '';
      let pending = '';
      p.stdout!.on('data', (d) => {
        out += d;
        pending += d;
        const lines = pending.split('\n');
        pending = lines.pop()!;
        for (const l of lines) {
          try {
            onLine?.(JSON.parse(l));
          } catch {
            /* not a log line */
          }
        }
        if (out.includes(readyText)) resolve();
      });
      p.stderr!.on('data', (d) => (out += d));
      p.on('exit', (code) => reject(new Error(`${service} exited ${code}: ${out}`)));
    });
  }

  /** SIGTERM to every process started, and their exit awaited (at most 5 s). */
  async stop(): Promise<void> {
    const running = this.procs.filter((p) => p.exitCode === null && p.signalCode === null);
    await Promise.all(
      running.map(
        (p) =>
          new Promise<void>((resolve) => {
            const timer = setTimeout(() => {
              p.kill('SIGKILL');
              resolve();
            }, 5000);
            p.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            p.kill('SIGTERM');
          }),
      ),
    );
  }
}
