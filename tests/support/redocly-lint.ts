import { spawnSync } from 'node:child_process';

/** One finding of the linter: the rule, how bad, what it says and where (a JSON pointer into the document). */
export interface LintProblem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  pointer: string;
}

/**
 * The engine of `redocly lint` (@redocly/openapi-core), with its `recommended` ruleset and nothing else. The package
 * is an ES module and jest runs CommonJS, so it runs in a child process reading the documents on stdin (all in one
 * process: loading the package is most of the time). It reaches
 * no network: the documents have no external $ref, and telemetry belongs to the CLI, not this package (the
 * variable is set all the same, so a later version that adds some stays quiet).
 */
const LINT = `
import { createConfig, lintFromString } from '@redocly/openapi-core';
let input = '';
process.stdin.on('data', (d) => (input += d)).on('end', async () => {
  const config = await createConfig({ extends: ['recommended'] });
  const out = [];
  for (const doc of JSON.parse(input)) {
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
    out.push(problems.map((p) => ({ ruleId: p.ruleId, severity: p.severity, message: p.message, pointer: p.location[0]?.pointer ?? '' })));
  }
  process.stdout.write(JSON.stringify(out));
});
`;

/** Each document's problems, in the order of `docs`. */
export function redoclyLint(docs: unknown[]): LintProblem[][] {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', LINT], {
    input: JSON.stringify(docs),
    cwd: __dirname,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  if (run.status !== 0) throw new Error(`redocly lint did not run (exit ${run.status}): ${run.stderr}`);
  return JSON.parse(run.stdout) as LintProblem[][];
}
