// bench/RESULTS.md holds one `## <name>` section per benchmark; a run replaces its own section and keeps the others.
// With `keepEarlier`, the run goes on top of its section under a `### Run …` heading and the section's earlier runs
// (and the notes written beside them) stay below it: the history a reader needs to see a trend or a regression.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

function headOf(file) {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: path.dirname(file),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return 'unknown commit';
  }
}

export function writeResultsSection(file, name, section, { keepEarlier = false } = {}) {
  let text = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmark results\n\n';
  const start = text.search(new RegExp(`^## ${name}\\s*$`, 'm'));
  let body = section;
  if (keepEarlier) {
    const fresh = section.replace(new RegExp(`^## ${name}\\s*\\n`), '').trim();
    const stamp = `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, \`${headOf(file)}\``;
    let earlier = '';
    if (start >= 0) {
      const rest = text.slice(start).replace(new RegExp(`^## ${name}\\s*\\n`), '');
      const next = rest.search(/^## /m);
      earlier = (next >= 0 ? rest.slice(0, next) : rest).trim();
    }
    body = `## ${name}\n\n### Run of ${stamp}\n\n${fresh}\n${earlier ? `\n${earlier}\n` : ''}`;
  }
  if (start >= 0) {
    const rest = text.slice(start + 1);
    const next = rest.search(/^## /m);
    text = text.slice(0, start) + body + (next >= 0 ? `\n${rest.slice(next)}` : '');
  } else {
    text = `${text.replace(/\n*$/, '\n\n')}${body}`;
  }
  writeFileSync(file, text);
  console.log(`wrote ${file}`);
}
