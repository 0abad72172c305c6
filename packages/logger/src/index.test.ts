import { context, trace, TraceFlags } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { createLogger } from './index';

// The context manager @crm/telemetry installs in every process; the span is a bare span context, no SDK needed.
const contextManager = new AsyncLocalStorageContextManager().enable();
beforeAll(() => context.setGlobalContextManager(contextManager));
afterAll(() => context.disable());

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger('logger-test', 'info', { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, lines };
}

const SPAN = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED };

test('a line written inside a span carries its traceId and spanId; lines outside carry neither', () => {
  const { log, lines } = capture();
  log.info({ step: 1 }, 'before');
  context.with(trace.setSpanContext(context.active(), SPAN), () => log.child({ consumer: 'c' }).info({ step: 2 }, 'inside'));
  log.info({ step: 3 }, 'after');

  expect(lines[1]).toMatchObject({ msg: 'inside', step: 2, consumer: 'c', traceId: SPAN.traceId, spanId: SPAN.spanId });
  for (const line of [lines[0], lines[2]]) {
    expect(line).not.toHaveProperty('traceId');
    expect(line).not.toHaveProperty('spanId');
  }
});

test("one line's fields never appear on the next", () => {
  const { log, lines } = capture();
  log.info({ secretless: 'first' }, 'one');
  log.info('two');
  expect(lines[1]).not.toHaveProperty('secretless');
});
