import pino from 'pino';
import * as ai from '@crm/ai';
import { createTestDatabase } from '@crm/testing';
import type { Stack } from '../../support/stack';
import { Client, email, Res } from '../../support/http';

/**
 * Replace the stack's AI service with one whose pino output is kept in memory, at trace level and
 * without the logger's redaction paths, so a test can prove no key reaches a log line by any route.
 * It listens on the same port, so the gateway keeps talking to it.
 */
export async function startAiWithCapturedLogs(stack: Stack, env: Record<string, string>) {
  await stack.stopService('ai');
  const db = await createTestDatabase('ai_logs');
  const lines: string[] = [];
  const log = pino({ level: 'trace', base: { service: 'ai' } }, { write: (line: string) => void lines.push(line) });
  const port = stack.addr('ai').split(':')[1];
  const service = await ai.start(ai.loadConfig({ ...stack.env, ...env, DATABASE_URL: db.url, GRPC_PORT: port }), log);
  return {
    lines,
    databaseUrl: db.url,
    async stop() {
      await service.stop();
      await db.drop();
    },
  };
}

/** The same client, remembering every response body and header so a test can search them all. */
export function recording(c: Client, sink: string[]): Client {
  const keep = async (p: Promise<Res>) => {
    const r = await p;
    sink.push(typeof r.body === 'string' ? r.body : JSON.stringify(r.body ?? ''));
    sink.push(JSON.stringify([...r.headers.entries()]));
    return r;
  };
  return {
    ...c,
    get: (p, h) => keep(c.get(p, h)),
    post: (p, b, h) => keep(c.post(p, b, h)),
    put: (p, b, h) => keep(c.put(p, b, h)),
    del: (p, h) => keep(c.del(p, h)),
    as: (t) => recording(c.as(t), sink),
    withKey: (k) => recording(c.withKey(k), sink),
  };
}

/** A signed-in agent (no settings:edit) of the owner's organization. */
export async function agentOf(api: Client, owner: Client): Promise<Client> {
  const agentEmail = email('agent');
  const password = 'correct horse battery';
  const created = await owner.post('/api/v1/users', { email: agentEmail, fullName: 'Andy Agent', role: 'agent', password });
  if (created.status !== 201) throw new Error(`creating agent failed: ${created.status} ${JSON.stringify(created.body)}`);
  const login = await api.post('/api/v1/auth/login', { email: agentEmail, password });
  if (login.status !== 200) throw new Error(`agent login failed: ${login.status}`);
  return api.as(login.body.token);
}
