// bench/RESULTS.md holds one `## <name>` section per benchmark; a run replaces its own section and keeps the others.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

export function writeResultsSection(file, name, section) {
  let text = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmark results\n\n';
  const start = text.search(new RegExp(`^## ${name}\\s*$`, 'm'));
  if (start >= 0) {
    const rest = text.slice(start + 1);
    const next = rest.search(/^## /m);
    text = text.slice(0, start) + section + (next >= 0 ? `\n${rest.slice(next)}` : '');
  } else {
    text = `${text.replace(/\n*$/, '\n\n')}${section}`;
  }
  writeFileSync(file, text);
  console.log(`wrote ${file}`);
}
