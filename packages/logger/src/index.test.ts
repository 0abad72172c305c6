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

test('secrets are kept out of lines: by field name, in URLs, query strings, cookies, messages and errors', () => {
  const { log, lines } = capture();
  const proxyErr = new Error('connect ECONNREFUSED via http://bob:hunter2@10.0.0.5:3128, cookie: zpw_sek=abc123; other=1');
  log.warn(
    {
      proxyUrl: 'http://bob:hunter2@proxy.example:3128',
      account: { accessToken: 'at-1', userAccessToken: 'uat-1', cookie: 'c=1' },
      url: 'https://alice:s3cret@api.example/v1?access_token=tok-9&page=2',
      err: proxyErr,
    },
    'request to https://carol:pw@host.example failed',
  );
  const line = JSON.stringify(lines[0]);
  for (const secret of ['hunter2', 'at-1', 'uat-1', 'c=1', 's3cret', 'tok-9', 'abc123', 'carol:pw', 'alice']) expect(line).not.toContain(secret);
  expect(lines[0]).toMatchObject({
    proxyUrl: '[redacted]',
    url: 'https://[redacted]@api.example/v1?access_token=[redacted]&page=2',
    msg: 'request to https://[redacted]@host.example failed',
  });
  expect((lines[0].err as { message: string }).message).toMatch(
    /^connect ECONNREFUSED via http:\/\/\[redacted\]@10\.0\.0\.5:3128, cookie: \[redacted\]/,
  );
});
