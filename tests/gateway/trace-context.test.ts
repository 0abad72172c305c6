import { randomBytes, randomUUID } from 'node:crypto';
import { eventually } from '@crm/testing';
import { startProcessStack, type ProcessStack } from '../support/service-processes';

// Without an exporter the gateway runs without AsyncLocalStorage and passes each request's traceparent explicitly
// in its gRPC calls: the client's trace id still reaches identity, whose log lines name it (here: the line identity
// writes for a user not found).
describe('trace context gateway → identity with nothing exported', () => {
  let stack: ProcessStack;
  const identityLines: Array<Record<string, unknown>> = [];
  let url = '';

  beforeAll(async () => {
    stack = await startProcessStack([], { onLine: { identity: (l) => identityLines.push(l) } });
    url = stack.url;
  }, 60_000);

  afterAll(() => stack?.stop());

  async function missingUser(headers: Record<string, string>): Promise<number> {
    const signup = await fetch(`${url}/api/v1/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ orgName: 'Traced', fullName: 'Tracy', email: `${randomUUID()}@example.test`, password: 'correct horse battery' }),
    }).then((r) => r.json() as Promise<{ token: string }>);
    const res = await fetch(`${url}/api/v1/users/${randomUUID()}`, { headers: { authorization: `Bearer ${signup.token}`, ...headers } });
    return res.status;
  }

  const lineOf = (requestId: string) => eventually(async () => identityLines.find((l) => l.requestId === requestId), 10_000);

  it("a client's traceparent: identity logs the call under the client's trace id, in a span of its own", async () => {
    const traceId = randomBytes(16).toString('hex');
    const spanId = randomBytes(8).toString('hex');
    const requestId = `trace-${randomUUID()}`;
    expect(await missingUser({ traceparent: `00-${traceId}-${spanId}-01`, 'x-request-id': requestId })).toBe(404);
    const line = await lineOf(requestId);
    expect(line.traceId).toBe(traceId);
    expect(line.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(line.spanId).not.toBe(spanId);
  });

  it('no traceparent: the request starts a trace, which identity continues', async () => {
    const requestId = `trace-${randomUUID()}`;
    expect(await missingUser({ 'x-request-id': requestId })).toBe(404);
    const line = await lineOf(requestId);
    expect(line.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(line.traceId).not.toBe('0'.repeat(32));
  });
});
