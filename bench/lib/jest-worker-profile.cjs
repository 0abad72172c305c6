// A CPU profile of every jest worker, for finding where the test suite's CPU goes. `--cpu-prof` is refused in
// NODE_OPTIONS, and a profile written at exit is lost when jest kills a worker that does not end in time, so the
// profile is written in 20 s chunks while the worker runs. Summarise the folder with bench/lib/profile-folder.mjs.
// Usage: JEST_PROFILE_DIR=/tmp/prof NODE_OPTIONS="--require ./bench/lib/jest-worker-profile.cjs" npx jest <files>
const dir = process.env.JEST_PROFILE_DIR;
if (dir && process.argv[1] && process.argv[1].includes('processChild')) {
  const inspector = require('node:inspector');
  const fs = require('node:fs');
  const path = require('node:path');
  fs.mkdirSync(dir, { recursive: true });
  const session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 1000 });
  session.post('Profiler.start');
  let chunk = 0;
  let writing = false;
  let ending = false;
  const write = () => {
    writing = true;
    session.post('Profiler.stop', (err, res) => {
      if (!err) fs.writeFileSync(path.join(dir, `worker-${process.pid}-${chunk++}.cpuprofile`), JSON.stringify(res.profile));
      writing = false;
      if (!ending) session.post('Profiler.start');
    });
  };
  setInterval(() => !writing && !ending && write(), 20_000).unref();
  // jest-worker's "end" message: write what is left before the worker is told to go.
  process.on('message', (m) => {
    if (Array.isArray(m) && m[0] === 2 && !writing) {
      write();
      ending = true;
    }
  });
  process.on('SIGTERM', () => {
    ending = true;
    const exit = () => (writing ? setTimeout(exit, 10) : process.exit(0));
    exit();
  });
}
