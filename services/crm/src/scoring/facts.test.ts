import { randomUUID } from 'node:crypto';
import { addedTags, factsOf } from './facts';
import { applyConfigPatch, applyRulePatch, DEFAULT_CONFIG } from './model';

const env = (type: string, data: unknown) => ({ id: randomUUID(), type, orgId: randomUUID(), occurredAt: '2030-01-01T10:00:00.000Z', data });

describe('scoring facts of events', () => {
  const contactId = randomUUID();

  it('messages: received always, sent only when a person sent it; at the message time', () => {
    expect(factsOf(env('message.received', { contactId, sentAt: '2030-01-01T09:00:00.000Z' }))?.facts).toEqual([
      { condition: 'message_received', value: '', at: new Date('2030-01-01T09:00:00.000Z') },
    ]);
    expect(factsOf(env('message.sent', { contactId, source: 'automation' }))).toBeUndefined();
    expect(factsOf(env('message.sent', { contactId, sentByUserId: randomUUID() }))?.facts.map((f) => f.condition)).toEqual(['message_replied']);
    expect(factsOf(env('message.received', { contactId: 'nope' }))).toBeUndefined();
  });

  it('contacts: created (with a non-default status), status changes, tags with the contact version', () => {
    const created = factsOf(
      env('contact.created', { contact: { id: contactId, status: 'lead', tags: ['VIP', 'vip', ' Hot '], updatedAt: '2030-01-01T10:00:00.000Z' } }),
    )!;
    expect(created.facts.map((f) => [f.condition, f.value])).toEqual([
      ['contact_created', ''],
      ['status_changed', 'lead'],
    ]);
    expect(created.snapshot).toEqual({ tags: ['vip', 'hot'], version: new Date('2030-01-01T10:00:00.000Z'), tagsChanged: true });
    expect(factsOf(env('contact.created', { contact: { id: contactId, status: 'new' } }))!.facts.map((f) => f.condition)).toEqual([
      'contact_created',
    ]);
    const renamed = factsOf(env('contact.updated', { contact: { id: contactId, status: 'lead', tags: ['vip'] }, changes: ['name'] }))!;
    expect(renamed.facts).toEqual([]);
    expect(renamed.snapshot?.tagsChanged).toBe(false);
    expect(
      factsOf(env('contact.updated', { contact: { id: contactId, status: 'customer' }, changes: ['status'] }))!.facts.map((f) => f.value),
    ).toEqual(['customer']);
  });

  it("added tags: against the last snapshot; none from an event older than it; all of a new contact's", () => {
    const v = (iso: string) => new Date(iso);
    const snap = { tags: ['vip', 'hot'], version: v('2030-01-02T00:00:00Z'), tagsChanged: true };
    expect(addedTags(snap, { tags: ['vip'], asOf: v('2030-01-01T00:00:00Z') }, false)).toEqual(['hot']);
    expect(addedTags(snap, { tags: ['vip'], asOf: v('2030-01-03T00:00:00Z') }, false)).toEqual([]);
    expect(addedTags(snap, { tags: null, asOf: null }, false)).toEqual(['vip', 'hot']);
    expect(addedTags(snap, { tags: ['vip', 'hot'], asOf: v('2030-01-02T00:00:00Z') }, true)).toEqual(['vip', 'hot']);
    expect(addedTags({ ...snap, tagsChanged: false }, { tags: [], asOf: null }, false)).toEqual([]);
  });
});

describe('scoring config and rule validation', () => {
  const fieldOf = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      return (err as { details?: { field: string }[] }).details?.[0]?.field;
    }
    return undefined;
  };

  it('names the field a patch should fix', () => {
    expect(fieldOf(() => applyConfigPatch(DEFAULT_CONFIG, { maxScore: 50 }))).toBe('maxScore');
    expect(fieldOf(() => applyConfigPatch(DEFAULT_CONFIG, { maxScore: 50, highValueThreshold: 60 }))).toBe('highValueThreshold');
    expect(fieldOf(() => applyConfigPatch(DEFAULT_CONFIG, { baseScore: 101 }))).toBe('baseScore');
    expect(fieldOf(() => applyConfigPatch(DEFAULT_CONFIG, { decayRate: Number.NaN }))).toBe('decayRate');
    expect(applyConfigPatch(DEFAULT_CONFIG, { maxScore: 1000, baseScore: 10, decayInterval: 'hourly' })).toEqual({
      ...DEFAULT_CONFIG,
      maxScore: 1000,
      baseScore: 10,
      decayInterval: 'hourly',
    });
  });

  it('rules: values only where the condition takes one, normalised; a new condition drops the old value', () => {
    expect(applyRulePatch({}, { name: 'Tag', condition: 'tag_added', value: ' VIP ', points: 5 })).toEqual({
      name: 'Tag',
      condition: 'tag_added',
      value: 'vip',
      points: 5,
      weight: 1,
    });
    expect(fieldOf(() => applyRulePatch({}, { name: 'x', condition: 'appointment_created', value: 'x', points: 1 }))).toBe('value');
    const rule = applyRulePatch({}, { name: 'Won', condition: 'status_changed', value: 'customer', points: 5 });
    expect(applyRulePatch(rule, { condition: 'message_received' })).toEqual({ ...rule, condition: 'message_received', value: '' });
    expect(applyRulePatch(rule, { points: -5 })).toEqual({ ...rule, points: -5 });
  });
});
