import { randomUUID } from 'node:crypto';
import { eventually } from '@crm/testing';
import { client, newOrg, type Client } from '../support/http';
import { newTrace, startProcessStack, traceIdOf, type ProcessStack } from '../support/service-processes';

/**
 * messaging runs without AsyncLocalStorage unless spans are exported (its main.ts) and passes its trace context
 * explicitly. Started as `npm start` starts it (its own process, nothing exported), a client's trace id still reaches
 * the events it enqueues: from a gRPC handler (its ctx.traceparent: a priority change, an inbox settings change and
 * its audit entry), and from a consumed event (eventTraceparent: identity's user.deactivated releasing the user's
 * conversations, announced as conversation.assigned).
 */
describe('messaging without an active context (nothing exported): the trace travels explicitly', () => {
  let stack: ProcessStack;
  let owner: Client;
  let orgId: string;

  /** The traceparents of messaging's outbox rows of `type` whose data has `key` = `value`, in order. */
  const outboxTraces = async (type: string, key?: string, value?: string) =>
    (
      await stack.query<{ traceparent: string | null }>(
        'messaging',
        `SELECT traceparent FROM outbox WHERE type = $1 AND ($2::text IS NULL OR data->>$2 = $3) ORDER BY seq`,
        [type, key ?? null, value ?? null],
      )
    ).map((r) => r.traceparent);

  /** An open conversation of the org on an account nobody connected (written directly), assigned to `assigneeId` (or nobody). */
  const conversation = async (assigneeId: string | null = null) => {
    const id = randomUUID();
    await stack.query(
      'messaging',
      `INSERT INTO conversations (id, org_id, chatnet_account_id, thread_type, thread_id, contact_name, assignee_id)
       VALUES ($1, $2, $3, 'user', $4, 'Tracy Trace', $5)`,
      [id, orgId, randomUUID(), `thread-${id}`, assigneeId],
    );
    return id;
  };

  beforeAll(async () => {
    stack = await startProcessStack(['messaging']);
    const org = await newOrg(client(stack.url), 'Explicit Messaging Trace');
    owner = org.owner;
    orgId = org.user.orgId;
  }, 90_000);

  afterAll(() => stack?.stop());

  it("a handler's event carries the trace id of the API call (conversation.priority_changed)", async () => {
    const id = await conversation();
    const { traceId, traceparent } = newTrace();
    const set = await owner.put(`/api/v1/conversations/${id}/priority`, { priority: 'high' }, { traceparent });
    expect(set.status).toBe(200);
    const traces = await outboxTraces('conversation.priority_changed', 'conversationId', id);
    expect(traces).toHaveLength(1);
    expect(traceIdOf(traces[0])).toBe(traceId);
  });

  it("a consumed event's work carries the trace id of the call that caused the event (user.deactivated → conversation.assigned)", async () => {
    const made = await owner.post('/api/v1/users', {
      email: `${randomUUID()}@example.test`,
      fullName: 'Rhea Leased',
      role: 'agent',
      password: 'correct horse battery',
    });
    expect(made.status).toBe(201);
    const id = await conversation(made.body.id);
    const { traceId, traceparent } = newTrace();
    expect((await owner.del(`/api/v1/users/${made.body.id}`, { traceparent })).status).toBe(204);
    // identity → user.deactivated (the call's trace) → messaging's consumer releases the conversation, in the event's.
    const traces = await eventually(async () => {
      const found = await outboxTraces('conversation.assigned', 'conversationId', id);
      return found.length > 0 && found;
    }, 15_000);
    expect(traces).toHaveLength(1);
    expect(traceIdOf(traces[0])).toBe(traceId);
    // A span of its own (the consumer's), not the caller's.
    expect(traces[0]!.split('-')[2]).not.toBe(traceparent.split('-')[2]);
  });

  it('an inbox settings change and its audit entry carry the trace id of the API call', async () => {
    const { traceId, traceparent } = newTrace();
    const put = await owner.put('/api/v1/settings/inbox', { agentVisibility: 'assigned' }, { traceparent });
    expect(put.status).toBe(200);
    const [updated] = await outboxTraces('inbox_settings.updated');
    expect(traceIdOf(updated)).toBe(traceId);
    const audits = await stack.query<{ traceparent: string | null }>(
      'messaging',
      `SELECT traceparent FROM outbox WHERE type = 'audit.recorded' AND data->>'action' = 'settings.inbox_updated'`,
    );
    expect(audits).toHaveLength(1);
    expect(traceIdOf(audits[0].traceparent)).toBe(traceId);
  });

  it('without a traceparent the event still starts a trace of its own: a valid traceparent, never the zero trace', async () => {
    const id = await conversation();
    expect((await owner.put(`/api/v1/conversations/${id}/priority`, { priority: 'low' })).status).toBe(200);
    const [untraced] = await outboxTraces('conversation.priority_changed', 'conversationId', id);
    const traceId = traceIdOf(untraced);
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(traceId).not.toBe('0'.repeat(32));
  });
});
