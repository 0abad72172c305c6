import { eventually } from '@crm/testing';
import { client, newOrg, type Client } from '../support/http';
import { newTrace, startProcessStack, traceIdOf, type ProcessStack } from '../support/service-processes';

/**
 * crm runs without AsyncLocalStorage unless spans are exported (its main.ts) and passes its trace context explicitly.
 * Started as `npm start` starts it (its own process, nothing exported), the events it enqueues still carry the trace
 * id of the API call that caused them, read from its outbox: a note's (a handler's ctx → the event), an appointment's
 * and the lead score it moves (ctx → the contact writer → lead scoring's announcement), a deletion's contact.deleted
 * and its audit entry.
 */
describe('trace context in crm without an active context (nothing exported)', () => {
  let stack: ProcessStack;
  let owner: Client;

  /** The trace id of each crm outbox row of `type` whose data matches `where` (a jsonb containment), in order. */
  const tracesOf = async (type: string, where: Record<string, unknown>) =>
    (
      await stack.query<{ traceparent: string | null }>('crm', 'SELECT traceparent FROM outbox WHERE type = $1 AND data @> $2::jsonb ORDER BY seq', [
        type,
        JSON.stringify(where),
      ])
    ).map((r) => traceIdOf(r.traceparent) ?? r.traceparent);

  beforeAll(async () => {
    stack = await startProcessStack(['crm']);
    ({ owner } = await newOrg(client(stack.url), 'Explicit Crm Trace'));
  }, 60_000);

  afterAll(() => stack?.stop());

  const newContact = async (name: string) => {
    const created = await owner.post('/api/v1/contacts', { name });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };

  it("a note's contact.note_created carries the trace id of the call that added it", async () => {
    const contactId = await newContact('Nora Note');
    const { traceId, traceparent } = newTrace();
    const added = await owner.post(`/api/v1/contacts/${contactId}/notes`, { content: 'Called back' }, { traceparent });
    expect(added.status).toBe(201);
    expect(await tracesOf('contact.note_created', { contactId })).toEqual([traceId]);
  });

  it("an appointment's event, and the lead score it moves, carry the trace id of the call that booked it", async () => {
    const rule = await owner.post('/api/v1/scoring/rules', { name: 'Booked', condition: 'appointment_created', points: 40 });
    expect(rule.status).toBe(201);
    // The org-wide recompute the rule asks for is done first: what it announces is a trace of its own.
    await eventually(async () => ((await owner.get('/api/v1/scoring/config')).body.recomputing === false ? true : undefined), 15_000);
    const contactId = await newContact('Abe Appointment');
    const { traceId, traceparent } = newTrace();
    const booked = await owner.post('/api/v1/appointments', { contactId, title: 'Demo', scheduledAt: '2031-05-01T08:00:00Z' }, { traceparent });
    expect(booked.status).toBe(201);
    expect(await tracesOf('appointment.created', { appointment: { contactId } })).toEqual([traceId]);
    expect(await tracesOf('contact.updated', { contact: { id: contactId, leadScore: 40 }, changes: ['leadScore'] })).toEqual([traceId]);
  });

  it("a deleted contact's contact.deleted and its audit entry carry the trace id of the call that deleted it", async () => {
    const contactId = await newContact('Dee Leted');
    const { traceId, traceparent } = newTrace();
    expect((await owner.del(`/api/v1/contacts/${contactId}`, { traceparent })).status).toBe(204);
    expect(await tracesOf('contact.deleted', { id: contactId })).toEqual([traceId]);
    expect(await tracesOf('audit.recorded', { action: 'contact.deleted', resourceId: contactId })).toEqual([traceId]);
  });
});
