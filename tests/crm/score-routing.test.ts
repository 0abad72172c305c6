import { type Pool } from '@crm/db';
import { SCORE_ONLY_CONTACT_UPDATE } from '@crm/events';
import { eventually, testPool } from '@crm/testing';
import { startReceiver, type Receiver } from '../webhooks/support';
import { CrmStack, listenEvents, startCrmStack } from './crm-support';

// Lead scoring's contact.updated (changes ['leadScore']) goes out under contact.updated.lead_score: webhook
// subscribers to contact.updated (and automation, messaging) get it as before, while crm's own contact-family
// queue is not bound to it, so crm never receives, claims and drops its own no-op event. Every other
// contact.updated still reaches that queue (analytics).
describe('scoring announcements are not delivered back to crm', () => {
  let crm: CrmStack;
  let rx: Receiver;
  let crmDb: Pool;
  let events: Awaited<ReturnType<typeof listenEvents>>;

  beforeAll(async () => {
    crm = await startCrmStack({
      services: ['webhooks'],
      serviceEnv: { webhooks: { WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1', WEBHOOK_RETRY_SCHEDULE: '200ms,500ms,1s' } },
    });
    rx = await startReceiver();
    crmDb = testPool(crm.stack.databaseUrl('crm'), 2);
    events = await listenEvents(crm.exchange, ['contact.updated', SCORE_ONLY_CONTACT_UPDATE]);
  });
  afterAll(async () => {
    await events?.close();
    await crmDb?.end();
    await rx?.close();
    await crm?.stop();
  });

  /** Whether crm's contact-family consumer claimed the event (one processed_events row per event it received). */
  const claimedByCrm = async (eventId: string) =>
    (await crmDb.query('SELECT 1 FROM processed_events WHERE event_id = $1 AND consumer = $2', [eventId, `${crm.exchange}.crm.contact-events`]))
      .rowCount === 1;

  it('a score change reaches a contact.updated webhook and not crm; the tag change that caused it and a later rename reach both', async () => {
    const { owner } = await crm.newOrg('Scored');
    expect((await owner.post('/api/v1/webhook-settings', { url: rx.url('/contacts'), events: ['contact.updated'] })).status).toBe(201);
    expect((await owner.put('/api/v1/scoring/config', { decayRate: 0 })).status).toBe(200);
    expect((await owner.post('/api/v1/scoring/rules', { name: 'Gold', condition: 'tag_added', value: 'gold', points: 40 })).status).toBe(201);
    await eventually(async () => ((await owner.get('/api/v1/scoring/config')).body.recomputing === false ? true : undefined));
    const id = (await owner.post('/api/v1/contacts', { name: 'Big Fish', phone: '+84911000019' })).body.id;

    expect((await owner.put(`/api/v1/contacts/${id}`, { tags: ['gold'] })).status).toBe(200);
    const updates = (changes: string) =>
      events.seen.filter((e) => e.type === 'contact.updated' && e.data.contact.id === id && e.data.changes.join() === changes);
    const [scored] = await eventually(async () => (updates('leadScore').length === 1 ? updates('leadScore') : undefined));
    const [tagged] = updates('tags');
    expect(scored.data.contact.leadScore).toBe(40);

    // The webhook subscriber gets both, the score change exactly as a contact.updated.
    const hooks = await eventually(async () => (rx.at('/contacts').length === 2 ? rx.at('/contacts') : undefined));
    const byChange = Object.fromEntries(hooks.map((r) => [r.json.data.changes.join(), r.json]));
    expect(byChange.leadScore).toEqual(
      expect.objectContaining({
        type: 'contact.updated',
        data: expect.objectContaining({ contact: expect.objectContaining({ id, tags: ['gold'] }), changes: ['leadScore'] }),
      }),
    );
    expect(byChange.tags.data.changes).toEqual(['tags']);

    // A rename after the score change: crm's queue is one ordered lane, so once it claimed the rename it would have
    // claimed the score change before it, had the queue been bound to it.
    expect((await owner.put(`/api/v1/contacts/${id}`, { name: 'Big Fish Co' })).status).toBe(200);
    const renamed = await eventually(async () => updates('name')[0]);
    await eventually(async () => ((await claimedByCrm(renamed.id)) ? true : undefined));
    expect(await claimedByCrm(tagged.id)).toBe(true);
    expect(await claimedByCrm(scored.id)).toBe(false);
  });
});
