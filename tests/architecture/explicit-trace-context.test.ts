import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * A service whose main.ts asks for `activeContext: 'when-exporting'` runs without AsyncLocalStorage unless spans are
 * exported (@crm/telemetry), so nothing in it may rely on the active context to carry a trace: there it is always
 * the root, and a trace read from it is silently lost. Such a service passes its trace explicitly (a handler's
 * `ctx.traceparent`, `eventTraceparent(event)`, `traceFields(ctx)` / `eventTraceFields(event)` for log lines), and
 * every event it enqueues says which trace it continues (`traceparent`, undefined when none: a timer's work).
 */
const root = path.join(__dirname, '..', '..');
const servicesDir = path.join(root, 'services');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts') ? [p] : [];
  });
}

/** The services that run without an active context unless exporting, read from their main.ts. */
const withoutActiveContext = readdirSync(servicesDir).filter((s) => {
  try {
    return /activeContext:\s*'when-exporting'/.test(readFileSync(path.join(servicesDir, s, 'src', 'main.ts'), 'utf8'));
  } catch {
    return false;
  }
});

/** Reads of the active context: each finds nothing in such a service. */
const IMPLICIT_READS: [RegExp, string][] = [
  [/\btraceparentOf\(\)/, 'traceparentOf() (the active span)'],
  [/\bcontext\.active\(\)/, 'context.active()'],
  [/\btrace\.getActiveSpan\(/, 'trace.getActiveSpan()'],
  [/\bwithEventTrace\(/, 'withEventTrace() (makes the event span active)'],
];

/** The argument text of each call of `name(` in `text`, to its closing parenthesis. */
function callArguments(text: string, name: string): string[] {
  const out: string[] = [];
  const re = new RegExp(`\\b${name}\\(`, 'g');
  for (let m = re.exec(text); m; m = re.exec(text)) {
    let depth = 1;
    let i = m.index + m[0].length;
    for (; i < text.length && depth > 0; i++) {
      if (text[i] === '(') depth++;
      else if (text[i] === ')') depth--;
    }
    out.push(text.slice(m.index + m[0].length, i - 1));
  }
  return out;
}

describe('services without an active context pass their trace explicitly', () => {
  it('every service is one of them (main.ts): none pays for AsyncLocalStorage unless it exports spans', () => {
    const services = readdirSync(servicesDir).filter((s) => statSync(path.join(servicesDir, s, 'src', 'main.ts'), { throwIfNoEntry: false }));
    expect(services.length).toBeGreaterThanOrEqual(8);
    expect(withoutActiveContext.sort()).toEqual(services.sort());
  });

  it.each(withoutActiveContext)('%s reads no trace from the active context', (service) => {
    const found: string[] = [];
    for (const file of sources(path.join(servicesDir, service, 'src'))) {
      const text = readFileSync(file, 'utf8');
      for (const [re, what] of IMPLICIT_READS) if (re.test(text)) found.push(`${path.relative(root, file)}: ${what}`);
    }
    expect(found).toEqual([]);
  });

  it.each(withoutActiveContext)('%s names the trace of every event it enqueues', (service) => {
    const found: string[] = [];
    for (const file of sources(path.join(servicesDir, service, 'src'))) {
      const text = readFileSync(file, 'utf8');
      for (const name of ['enqueueEvent', 'enqueueEvents']) {
        for (const args of callArguments(text, name)) {
          if (!/\btraceparent\b/.test(args)) found.push(`${path.relative(root, file)}: ${name}(${args.replace(/\s+/g, ' ').slice(0, 80)}…)`);
        }
      }
    }
    expect(found).toEqual([]);
  });
});
