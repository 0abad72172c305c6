import type { PoolClient } from 'pg';
import type { EventEnvelope } from '@crm/events';
import type { Logger } from '@crm/logger';
import { messageActivity } from './message-activity';

const ORG = '6b0d4a70-8f2e-4c43-9a0e-2a1d7f0c9e11';
const message = (contactId: unknown): EventEnvelope =>
  ({
    id: `evt-${Math.random()}`,
    type: 'message.received',
    orgId: ORG,
    occurredAt: new Date().toISOString(),
    data: { contactId, content: 'hello', contentType: 'text', sentAt: new Date().toISOString() },
  }) as unknown as EventEnvelope;

function harness() {
  const warnings: string[] = [];
  const log = { warn: (_: object, msg: string) => warnings.push(msg) } as unknown as Logger;
  const queries: string[] = [];
  const db = {
    query: async (q: string | { text: string }) => (queries.push(typeof q === 'string' ? q : q.text), { rows: [], rowCount: 0 }),
  } as unknown as PoolClient;
  return { warnings, queries, apply: messageActivity(log), db };
}

describe('messageActivity', () => {
  it('a message of a conversation with no contact (a group, or one not linked yet) touches nothing and warns of nothing', async () => {
    const h = harness();
    await h.apply([message(null), message(null)], h.db);
    expect(h.warnings).toEqual([]);
    expect(h.queries).toEqual([]);
  });

  it('a contactId that is not an id is reported once per event and skipped', async () => {
    const h = harness();
    await h.apply([message('not-an-id')], h.db);
    expect(h.warnings).toEqual(['message event without a usable contactId or orgId; ignored']);
    expect(h.queries).toEqual([]);
  });
});
