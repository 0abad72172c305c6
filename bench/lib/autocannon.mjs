// autocannon as a child process (its own CPU stays out of the load generator's), authenticated with a bearer token.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { root } from './processes.mjs';

/**
 * Run autocannon against `url` with `options` (e.g. ['-c', '50', '-d', '10']) and return its JSON result; a run with
 * any non-2xx answer is an error, naming the statuses, since its figures would not be of the path measured. A path
 * measured for its refusal names the one status it must answer instead (`expectStatus`).
 */
export function autocannon(url, token, options, expectStatus = undefined) {
  return new Promise((resolve, reject) => {
    const bin = path.join(root, 'node_modules', '.bin', 'autocannon');
    const p = spawn(bin, [...options, '-j', '-H', `authorization=Bearer ${token}`, url], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited ${code}`));
      const r = JSON.parse(out);
      if (expectStatus !== undefined) {
        const codes = Object.keys(r.statusCodeStats ?? {});
        if (codes.length !== 1 || Number(codes[0]) !== expectStatus)
          return reject(new Error(`expected only ${expectStatus} from ${url}: ${JSON.stringify(r.statusCodeStats)}`));
        return resolve(r);
      }
      if (r.non2xx > 0) return reject(new Error(`${r.non2xx} non-2xx responses from ${url}: ${JSON.stringify(r.statusCodeStats)}`));
      resolve(r);
    });
  });
}
