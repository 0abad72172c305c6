// autocannon over many keys: each request takes the next of `requests` ({ path, token }), in turn, in a child process
// (its CPU stays out of the load generator's, as bench/lib/autocannon.mjs). Reads of one row asked at once share a query
// (@crm/db coalescedReads), and the same key asked twice at once is read once: a bench asking one row over and over
// would measure that sharing, which users' traffic (many agents, many contacts) mostly does not get.
//   Parent: spreadAutocannon(origin, requests, { connections, seconds }) → autocannon's result.
//   Child: node autocannon-spread.mjs, the run's JSON on stdin (what the parent spawns).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { root } from './processes.mjs';

const self = fileURLToPath(import.meta.url);

/** The result of autocannon's run over `requests`; any non-2xx answer is an error (the figures would be of another path). */
export function spreadAutocannon(origin, requests, { connections, seconds }) {
  return new Promise((resolve, reject) => {
    // The requests go in on stdin: hundreds of tokens are more than one argument may hold.
    const p = spawn(process.execPath, [self], { stdio: ['pipe', 'pipe', 'inherit'] });
    p.stdin.end(JSON.stringify({ origin, requests, connections, seconds }));
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited ${code}`));
      const r = JSON.parse(out);
      if (r.non2xx > 0) return reject(new Error(`${r.non2xx} non-2xx responses from ${origin}: ${JSON.stringify(r.statusCodeStats)}`));
      resolve(r);
    });
  });
}

if (process.argv[1] === self) {
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  const { origin, requests, connections, seconds } = JSON.parse(input);
  const autocannon = createRequire(path.join(root, 'package.json'))('autocannon');
  let next = 0;
  const result = await autocannon({
    url: origin,
    connections,
    duration: seconds,
    requests: [
      {
        method: 'GET',
        setupRequest: (req) => {
          const r = requests[next++ % requests.length];
          return { ...req, path: r.path, headers: { ...req.headers, authorization: `Bearer ${r.token}` } };
        },
      },
    ],
  });
  process.stdout.write(JSON.stringify(result));
}
