import { randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { eventually } from '@crm/testing';
import type { Client } from '../support/http';
import { ConsumerProbe } from '../support/consumers';
import { startStack, Stack } from '../support/stack';
import { contactData, eventBus, org } from './support';
import { connectPatiently } from '../support/patient-client';

// crm's contact merges as automation follows them, through the gateway with the real crm: the source's campaign
// recipient rows and rule runs move to the target (POST /contacts/:id/merge), a campaign reaches the merged
// person once, the undo (POST /contacts/merges/:mergeId/undo) moves exactly those rows back, a redelivered event
// changes nothing, and another org's merge event touches nothing of this org. messaging is not running: the
// campaigns are scheduled for tomorrow, so their recipients stay as the test sets them.
describe('automation follows contact merges', () => {
  let stack: Stack;
  let owner: Client;
  let otherOrgId: string;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let merges: Awaited<ReturnType<Awaited<ReturnType<typeof eventBus>>['subscribe']>>;
  let triggers: ConsumerProbe;
  let db: PgClient;
  let target: string;
  let source: string;
  let ruleId: string;
  /** both: both contacts are recipients; sourceOnly: only the source; sourceSent: both, the source's already sent. */
  const campaigns: Record<'both' | 'sourceOnly' | 'sourceSent', string> = { both: '', sourceOnly: '', sourceSent: '' };
  let mergeId: string;

  const recipients = async (campaignId: string) =>
    Object.fromEntries(
      ((await owner.get(`/api/v1/campaigns/${campaignId}/recipients?limit=100`)).body.data as any[]).map((r) => [
        r.contactId,
        { status: r.status, error: r.error },
      ]),
    );
  const counts = async (campaignId: string) => (await owner.get(`/api/v1/campaigns/${campaignId}`)).body.counts;
  const runContacts = async () => ((await owner.get(`/api/v1/automation/rules/${ruleId}/runs`)).body.data as any[]).map((r) => r.contactId);
  /** Everything this test looks at, to compare before and after. */
  const state = async () => ({
    both: await recipients(campaigns.both),
    bothCounts: await counts(campaigns.both),
    sourceOnly: await recipients(campaigns.sourceOnly),
    sourceSent: await recipients(campaigns.sourceSent),
    sourceSentCounts: await counts(campaigns.sourceSent),
    runs: await runContacts(),
  });

  async function contact(name: string, tags: string[]) {
    const res = await owner.post('/api/v1/contacts', { name, tags });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }
  async function campaign(name: string, tag: string, templateId: string) {
    const list = await owner.post('/api/v1/customer-lists', { name, criteria: { filters: [{ field: 'tags', operator: 'contains', value: tag }] } });
    expect(list.status).toBe(201);
    const schedule = new Date(Date.now() + 24 * 3600_000).toISOString();
    const created = await owner.post('/api/v1/campaigns', { name, listId: list.body.id, templateId, schedule });
    expect(created.status).toBe(201);
    expect((await owner.post(`/api/v1/campaigns/${created.body.id}/activate`)).status).toBe(200);
    await eventually(async () => (await owner.get(`/api/v1/campaigns/${created.body.id}`)).body.recipientsReady || undefined);
    return created.body.id as string;
  }
  /** Publish a copy of `event` under a new id (a redelivery the consumer's own de-duplication cannot catch). */
  async function deliverAgain(event: { type: string; orgId: string; data: unknown }) {
    const mark = await triggers.mark();
    await bus.publish(event.type, event.orgId, event.data);
    await triggers.settled(mark, 1);
  }

  beforeAll(async () => {
    stack = await startStack({ services: ['crm', 'automation'], serviceEnv: { automation: { CAMPAIGN_POLL_MS: '100', RUN_POLL_MS: '100' } } });
    const a = await org(stack, 'Merge Acme');
    owner = a.owner;
    otherOrgId = (await org(stack, 'Merge Globex')).orgId;
    bus = await eventBus(stack);
    merges = await bus.subscribe('contact.#');
    triggers = new ConsumerProbe(stack, 'automation', `${stack.env.EVENTS_EXCHANGE}.automation.triggers`);
    db = await connectPatiently(stack.databaseUrl('automation'));

    // A rule that waits a day after a contact is created: the source's run is still waiting when it is merged.
    const rule = await owner.post('/api/v1/automation/rules', {
      name: 'Follow up tomorrow',
      trigger: { type: 'contact_created', conditions: [{ field: 'tags', operator: 'contains', value: 'follow-up' }] },
      actions: [
        { type: 'wait', duration: '1d' },
        { type: 'send_notification', template: 'Call {{name}}' },
      ],
    });
    expect(rule.status).toBe(201);
    ruleId = rule.body.id;
    expect((await owner.post(`/api/v1/automation/rules/${ruleId}/activate`)).status).toBe(200);

    target = await contact('Tam Target', ['in-both', 'in-sent']);
    source = await contact('Son Source', ['in-both', 'in-sent', 'only-source', 'follow-up']);
    const templateId = (await owner.post('/api/v1/automation/templates', { name: 'Promo', content: 'Chào {{name}}' })).body.id;
    campaigns.both = await campaign('Both', 'in-both', templateId);
    campaigns.sourceOnly = await campaign('Source only', 'only-source', templateId);
    campaigns.sourceSent = await campaign('Source sent', 'in-sent', templateId);
    // The source was already reached by this campaign (staged: messaging is not running here).
    await db.query(`UPDATE campaign_recipients SET status = 'sent', sent_at = now() WHERE campaign_id = $1 AND contact_id = $2`, [
      campaigns.sourceSent,
      source,
    ]);
    await db.query('UPDATE campaigns SET sent_count = 1 WHERE id = $1', [campaigns.sourceSent]);
    await eventually(async () => ((await runContacts()).length === 1 && (await runContacts())[0] === source) || undefined);
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await bus?.close();
    await stack?.stop();
  });

  let before: Awaited<ReturnType<typeof state>>;

  it('before: both contacts are pending recipients, the source has a waiting run', async () => {
    before = await state();
    expect(before.both).toEqual({ [target]: { status: 'pending', error: null }, [source]: { status: 'pending', error: null } });
    expect(before.sourceOnly).toEqual({ [source]: { status: 'pending', error: null } });
    expect(before.sourceSent).toEqual({ [target]: { status: 'pending', error: null }, [source]: { status: 'sent', error: null } });
    expect(before.runs).toEqual([source]);
  });

  it("another org's merge event naming this org's contacts changes nothing here", async () => {
    const mark = await triggers.mark();
    const fake = { mergeId: randomUUID(), targetId: target, sourceId: source };
    // A well-formed event of the other org whose data names this org's contacts.
    await bus.publish('contact.merged', otherOrgId, { ...fake, target: contactData({ id: target }), source: contactData({ id: source }) });
    await triggers.settled(mark, 1);
    expect(await state()).toEqual(before);
  });

  it('POST /contacts/:id/merge: the source’s rows point at the target; a campaign reaches the person once', async () => {
    const res = await owner.post(`/api/v1/contacts/${target}/merge`, { sourceId: source });
    expect(res.status).toBe(200);
    mergeId = res.body.id;
    await eventually(async () => (await runContacts())[0] === target || undefined);
    const after = await state();
    expect(after.runs).toEqual([target]);
    expect(after.sourceOnly).toEqual({ [target]: { status: 'pending', error: null } });
    // Both were pending: the target's row is the person's, the source's is set aside.
    expect(after.both[target]).toEqual({ status: 'pending', error: null });
    expect(after.both[source]).toEqual({ status: 'skipped', error: expect.stringContaining(`Merged into contact ${target}`) });
    expect(after.bothCounts).toEqual(expect.objectContaining({ total: 2, skipped: 1, pending: 1 }));
    // The source was already sent to: the target's pending row must not send again.
    expect(after.sourceSent[source]).toEqual({ status: 'sent', error: null });
    expect(after.sourceSent[target]).toEqual({ status: 'skipped', error: expect.stringContaining(`Already sent to contact ${source}`) });
    expect(after.sourceSentCounts).toEqual(expect.objectContaining({ total: 2, sent: 1, skipped: 1, pending: 0 }));
  });

  it('the same merge delivered again changes nothing more', async () => {
    const event = await eventually(async () => merges.find((e) => e.type === 'contact.merged' && e.data.mergeId === mergeId));
    const now = await state();
    await deliverAgain(event);
    expect(await state()).toEqual(now);
  });

  it('POST /contacts/merges/:mergeId/undo: exactly those rows go back; delivered again, nothing more changes', async () => {
    expect((await owner.post(`/api/v1/contacts/merges/${mergeId}/undo`)).status).toBe(200);
    await eventually(async () => (await runContacts())[0] === source || undefined);
    expect(await state()).toEqual(before);
    const event = await eventually(async () => merges.find((e) => e.type === 'contact.merge_undone' && e.data.mergeId === mergeId));
    await deliverAgain(event);
    expect(await state()).toEqual(before);
    // A late copy of the merge itself finds it undone and moves nothing.
    await deliverAgain(merges.find((e) => e.type === 'contact.merged' && e.data.mergeId === mergeId)!);
    expect(await state()).toEqual(before);
  });
});
