import { randomBytes, randomUUID } from 'node:crypto';
import {
  clearRedisPrefix,
  createTestDatabase,
  deleteRabbitPrefix,
  eventually,
  freePort,
  infra,
  internalAuthSeed,
  TestDatabase,
  uniqueName,
} from '@crm/testing';
import { ServiceProcesses } from '../support/service-processes';

// Without an exporter the gateway runs without AsyncLocalStorage and passes each request's traceparent explicitly
// in its gRPC calls: the client's trace id still reaches identity, whose log lines name it (here: the line identity
// writes for a user not found).
describe('trace context gateway → identity with nothing exported', () => {
  let db: TestDatabase;
  const procs = new ServiceProcesses();
  const identityLines: Array<Record<string, unknown>> = [];
  const prefix = `${uniqueName('t')}:`;
  const exchange = uniqueName('t_events');
  let url = '';

  beforeAll(async () => {
    db = await createTestDatabase('identity');
    const grpcPort = await freePort();
    const httpPort = await freePort();
    const common = {
      JWT_SECRET: randomBytes(32).toString('hex'),
      INTERNAL_AUTH_SEED: internalAuthSeed,
      REDIS_PREFIX: prefix,
      EVENTS_EXCHANGE: exchange,
      LOG_LEVEL: 'info',
      SIGNUP_ENABLED: 'true',
      METRICS_PORT: '0',
    };
    await procs.launch('identity', { ...common, DATABASE_URL: db.url, GRPC_PORT: String(grpcPort) }, 'identity listening', (l) =>
      identityLines.push(l),
    );
    await procs.launch('gateway', { ...common, PORT: String(httpPort), IDENTITY_ADDR: `127.0.0.1:${grpcPort}` }, 'gateway listening');
    url = `http://127.0.0.1:${httpPort}`;
  });

  afterAll(async () => {
    await procs.stop();
    await db.drop();
    await clearRedisPrefix(prefix);
    await deleteRabbitPrefix(infra.amqpUrl, exchange);
  });

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
