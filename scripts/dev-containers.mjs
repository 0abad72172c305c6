// `npm run dev:containers`: PostgreSQL, RabbitMQ and Redis in Docker containers (testcontainers), then exactly what
// `npm start` does against them; the containers are stopped when the stack stops (Ctrl+C, SIGTERM, a crash).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { build, devInfra, ensureInstalled, root } from './lib.mjs';

ensureInstalled();
build();
const { containersPlan, dockerEngine, SERVERS, startServerContainer } = await devInfra();

const plan = containersPlan({ env: process.env, docker: await dockerEngine() });
for (const line of plan.lines) (line.startsWith('✗') ? console.error : console.log)(line);
if (!plan.proceed) process.exit(1);

const containers = [];
let stopped;
/** Stop every container once, however many ways the run ends. */
function stopContainers() {
  stopped ??= Promise.all(containers.map((c) => c.stop())).then(() => {
    if (containers.length) console.log(`› Stopped the containers (${containers.map((c) => c.key).join(', ')}).`);
  });
  return stopped;
}

// A signal while the containers are still starting: stop what started and leave.
const early = (signal) => stopContainers().then(() => process.exit(signal === 'SIGINT' ? 130 : 143));
process.once('SIGINT', early);
process.once('SIGTERM', early);

const started = await Promise.allSettled(plan.start.map((key) => startServerContainer(key)));
for (const s of started) if (s.status === 'fulfilled') containers.push(s.value);
const failed = started.find((s) => s.status === 'rejected');
if (failed) {
  console.error(`✗ A container did not start: ${failed.reason?.message ?? failed.reason}`);
  await stopContainers();
  process.exit(1);
}
process.off('SIGINT', early);
process.off('SIGTERM', early);

const env = { ...process.env };
for (const c of containers) {
  const server = SERVERS.find((s) => s.key === c.key);
  env[server.envVar] = c.url;
  const { hostname, port } = new URL(c.url);
  // Where, not the URL: it carries the container's credentials.
  console.log(`› ${server.name} in a container at ${hostname}:${port} (${server.envVar} for the stack).`);
}

// The same start path as `npm start`, in a child so its own shutdown (and exit code) stays as it is.
const stack = spawn(process.execPath, [path.join(root, 'scripts', 'start.mjs')], { cwd: root, env, stdio: 'inherit' });
// Ctrl+C reaches the child too (same process group); SIGTERM sent to this process alone is passed on.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => stack.kill(signal));
stack.on('exit', async (code, signal) => {
  await stopContainers();
  process.exit(code ?? (signal === 'SIGINT' ? 130 : 1));
});
