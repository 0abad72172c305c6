import { randomUUID } from 'node:crypto';
import { connect, type ChannelModel, type ConfirmChannel } from 'amqplib';
import { amqpUser } from '@crm/events';
import { eventually, infra } from '@crm/testing';
import { eventData, messageData } from '../support/event-data';
import { client, newOrg, type Client } from '../support/http';
import { newTrace, startProcessStack, traceIdOf, type ProcessStack } from '../support/service-processes';
import { producerStampHeaders } from '../support/stamps';

/**
 * automation runs without AsyncLocalStorage unless spans are exported (its main.ts) and passes its trace context
 * explicitly. Started as `npm start` starts it (its own process, nothing exported), the trace still reaches what it
 * enqueues: the audit entry of an API call (a handler's ctx.traceparent → the outbox row), and the notifications a
 * consumed event raises (eventTraceparent → the outbox row), each event of a batch in its own trace.
 */
describe('trace context in automation without an active context (nothing exported)', () => {
  let stack: ProcessStack;
  let owner: Client;
  let orgId: string;
  let amqp: ChannelModel;
  let channel: ConfirmChannel;

  /** An event published as its producer's relay would, continuing `traceparent`. */
  const publish = async (type: string, data: unknown, traceparent: string) => {
    const id = randomUUID();
    const envelope = { id, type, orgId, occurredAt: new Date().toISOString(), data };
    channel.publish(stack.exchange, type, Buffer.from(JSON.stringify(envelope)), {
      persistent: true,
      userId: amqpUser(infra.amqpUrl),
      contentType: 'application/json',
      messageId: id,
      headers: { ...producerStampHeaders(type, orgId, id), traceparent },
    });
    await channel.waitForConfirms();
  };

  /** The traceparent of automation's outbox row of `type` whose data matches, once it is there. */
  const outboxTraceparent = (type: string, where: string, value: string) =>
    eventually(async () => {
      const rows = await stack.query<{ traceparent: string | null }>(
        'automation',
        `SELECT traceparent FROM outbox WHERE type = $1 AND ${where} = $2`,
        [type, value],
      );
      return rows[0];
    }, 15_000);

  beforeAll(async () => {
    stack = await startProcessStack(['automation']);
    const made = await newOrg(client(stack.url), 'Explicit Automation');
    owner = made.owner;
    orgId = made.user.orgId;
    amqp = await connect(infra.amqpUrl);
    channel = await amqp.createConfirmChannel();
    await channel.assertExchange(stack.exchange, 'topic', { durable: true });
  }, 60_000);

  afterAll(async () => {
    await amqp?.close().catch(() => undefined);
    await stack?.stop();
  });

  it("an API call's audit entry carries the client's trace id (DELETE a rule → audit.recorded)", async () => {
    const created = await owner.post('/api/v1/automation/rules', {
      name: 'Traced rule',
      trigger: { type: 'contact_created', conditions: [] },
      actions: [{ type: 'add_tag', tag: 'traced' }],
    });
    expect(created.status).toBe(201);
    const { traceId, traceparent } = newTrace();
    expect((await owner.del(`/api/v1/automation/rules/${created.body.id}`, { traceparent })).status).toBeLessThan(300);
    const row = await outboxTraceparent('audit.recorded', `data->>'resourceId'`, created.body.id);
    expect(traceIdOf(row.traceparent)).toBe(traceId);
    const rowSpan = row.traceparent!.split('-')[2];
    // automation's own server span, a child of the gateway's.
    expect(rowSpan).not.toBe(traceparent.split('-')[2]);
  });

  it('a consumed event carries its trace id into the notification it raises (webhook.disabled → notification.created)', async () => {
    const { traceId, traceparent } = newTrace();
    const webhookId = randomUUID();
    await publish('webhook.disabled', eventData('webhook.disabled', { webhookId }), traceparent);
    const row = await outboxTraceparent('notification.created', `data->>'resourceId'`, webhookId);
    expect(traceIdOf(row.traceparent)).toBe(traceId);
    const rowSpan = row.traceparent!.split('-')[2];
    // The consumer's span, a child of the producer's.
    expect(rowSpan).not.toBe(traceparent.split('-')[2]);
  });

  it('each inbound alert keeps the trace of its own message, however the consumer batches them', async () => {
    const assigneeId = randomUUID();
    const sent = await Promise.all(
      [0, 1, 2].map(async () => {
        const t = newTrace();
        const data = messageData('message.received', { assigneeId });
        await publish('message.received', data, t.traceparent);
        return { ...t, conversationId: data.conversationId as string };
      }),
    );
    for (const s of sent) {
      const row = await outboxTraceparent('notification.created', `data->>'resourceId'`, s.conversationId);
      expect(traceIdOf(row.traceparent)).toBe(s.traceId);
    }
  });
});
