import { client, newOrg } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { fillPath, hostileBody, hostileQuery, KNOWN_NAMES, namesInOpenApi, rng } from './fuzz-inputs';

/**
 * No input gives a 5xx: thousands of generated requests to every route the gateway's router has (read from
 * the router, not a hand list), each with hostile path ids, query parameters and bodies, against the whole
 * stack, as an owner (JWT) under /api/v1 and with the API key under /api/public. The same seed makes the
 * same requests, so a failure can be replayed.
 *
 *   FUZZ_REQUESTS (default 1500), FUZZ_SEED (default 11), FUZZ_CONCURRENCY (default 4)
 *
 * bench/fuzz/run.mjs is the long run (more requests, several seeds).
 */
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 1500);
const SEED = Number(process.env.FUZZ_SEED ?? 11);
const CONCURRENCY = Number(process.env.FUZZ_CONCURRENCY ?? 4);
/** Rough ceiling: the default run takes well under a minute on a shared 2-core machine. */
const TIME_LIMIT_MS = Math.max(120_000, REQUESTS * 100);

interface Outcome {
  method: string;
  url: string;
  body?: string;
  status: number;
  response: string;
}

describe(`gateway fuzz: ${REQUESTS} generated requests, seed ${SEED}`, () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({
      services: ['crm', 'messaging', 'chatnet-connector', 'automation', 'ai', 'webhooks'],
      // A 5xx is shown with what the services logged about it (its errorId leads to the line and its cause).
      captureErrors: true,
      // Limits are not what this test is about: with them it would mostly see 429s.
      env: {
        RATE_LIMIT_USER_PER_MINUTE: '1000000',
        RATE_LIMIT_PUBLIC_PER_MINUTE: '1000000',
        RATE_LIMIT_AUTH_PER_MINUTE: '1000000',
        LOGIN_MAX_FAILURES: '1000000',
        LOGIN_MAX_FAILURES_PER_DAY: '1000000',
      },
    });
  }, 60_000);
  afterAll(() => stack?.stop());

  it(
    'answers every request with a status below 500',
    async () => {
      const api = client(stack.url);
      const org = await newOrg(api, 'Fuzz');
      const password = 'correct horse battery';
      const creds = { token: org.token, apiKey: (await org.owner.post('/api/v1/settings/api-key/generate')).body.apiKey as string };
      // A few real ids so some requests get past "not found" into the services' own validation.
      const contact = await org.owner.post('/api/v1/contacts', { name: 'Fuzz Target', phone: '0911 222 333' });
      const realIds = [org.user.id, contact.body.id].filter(Boolean) as string[];

      const openApi = (await api.get('/api/public/openapi.json')).body;
      const names = [...new Set([...KNOWN_NAMES, ...namesInOpenApi(openApi)])];
      const routes = stack.routes;
      expect(routes.length).toBeGreaterThan(100);

      const r = rng(SEED);
      const plan = Array.from({ length: REQUESTS }, (_, i) => {
        // Every route at least once, then at random.
        const route = i < routes.length ? routes[i] : r.pick(routes);
        const method = route.method === '*' ? r.pick(['GET', 'POST', 'PUT', 'DELETE']) : route.method;
        const withBody = method !== 'GET' && method !== 'HEAD' && method !== 'DELETE';
        return {
          method,
          pattern: route.path,
          path: fillPath(r, route.path, realIds) + hostileQuery(r, names),
          body: withBody ? hostileBody(r, names) : undefined,
        };
      });

      const send = async (p: { method: string; path: string; body?: string }, headers: Record<string, string>) => {
        try {
          const res = await fetch(stack.url + p.path, {
            method: p.method,
            headers,
            body: p.body,
            redirect: 'manual',
            signal: AbortSignal.timeout(20_000),
          });
          return { status: res.status, response: await res.text(), retryAfter: res.headers.get('retry-after') };
        } catch (err) {
          // A hang or a dropped connection is as much a server failure as a 500.
          return { status: 599, response: String(err), retryAfter: null };
        }
      };
      let unavailable = 0;
      const failures: Outcome[] = [];
      const statuses = new Map<number, number>();
      let next = 0;
      const worker = async () => {
        while (next < plan.length) {
          const p = plan[next++];
          const headers: Record<string, string> = p.pattern.startsWith('/api/public')
            ? { 'x-api-key': creds.apiKey }
            : { authorization: `Bearer ${creds.token}` };
          if (p.body !== undefined) headers['content-type'] = 'application/json';
          const first = await send(p, headers);
          let { status, response } = first;
          // 503 "unavailable" is the machine out of room (PostgreSQL refusing connections while other test files'
          // stacks hold them), not an answer to the input: asked again after its Retry-After, the same request must
          // get a real answer. A second 503 is a failure like any 5xx.
          if (status === 503 && first.retryAfter && response.includes('"code":"unavailable"')) {
            unavailable++;
            await new Promise((r) => setTimeout(r, Number(first.retryAfter) * 1000));
            ({ status, response } = await send(p, headers));
          }
          // /readyz's 503 not_ready is the stack's state, not an answer to the input: a health check that missed its 2 s
          // deadline while the machine is saturated (every service of the stack runs in this process). Asked again a
          // moment later it must be ready; a second not_ready is a failure like any 5xx.
          if (status === 503 && p.pattern === '/readyz' && response.includes('"status":"not_ready"')) {
            unavailable++;
            await new Promise((r) => setTimeout(r, 1000));
            ({ status, response } = await send(p, headers));
          }
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          if (status >= 500)
            failures.push({ method: p.method, url: p.path.slice(0, 300), body: p.body?.slice(0, 300), status, response: response.slice(0, 300) });
          // Routes that end the session or rotate the key: carry on with fresh credentials.
          if (p.pattern === '/api/v1/auth/logout' && status < 300)
            creds.token = (await api.post('/api/v1/auth/login', { email: org.email, password })).body.token;
          if (p.pattern === '/api/v1/settings/api-key/generate' && status === 201) creds.apiKey = JSON.parse(response).apiKey;
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));

      // The spread of answers, for whoever reads the log of a long run.
      if (process.env.FUZZ_REPORT)
        console.log(
          JSON.stringify({
            seed: SEED,
            requests: REQUESTS,
            routes: routes.length,
            statuses: Object.fromEntries([...statuses].sort(([a], [b]) => a - b)),
            unavailableRetried: unavailable,
            failures: failures.length,
          }),
        );
      expect({ failures, logged: failures.length ? stack.errorLines() : [] }).toEqual({ failures: [], logged: [] });
    },
    TIME_LIMIT_MS,
  );
});
