import { apiFields, mergedFields, restoredFields } from './merge-fields';

const target = {
  id: 't',
  name: 'Lan',
  email: '',
  phone: '',
  avatar: '',
  chatnet_uid: null,
  status_id: null,
  assigned_user_id: 'u1',
  notes: '',
  deal_value: 0,
  tags: ['VIP', 'hanoi'],
  thread_types: ['user'],
  last_activity: '2024-05-01T10:00:00+00:00',
};
const source = {
  id: 's',
  name: 'Lan Nguyen',
  email: 'lan@example.com',
  phone: '+84901234567',
  avatar: 'https://a/x.png',
  chatnet_uid: 'uid-1',
  status_id: 'st',
  assigned_user_id: 'u2',
  notes: 'met at the fair',
  deal_value: 1200.5,
  tags: ['vip', 'saigon'],
  thread_types: ['group', 'user'],
  last_activity: '2024-06-01T10:00:00+00:00',
};

describe('mergedFields', () => {
  it("fills only the target's empty fields; its non-empty values win; tags and thread types are united", () => {
    expect(mergedFields(target, source)).toEqual({
      email: 'lan@example.com',
      phone: '+84901234567',
      avatar: 'https://a/x.png',
      chatnet_uid: 'uid-1',
      status_id: 'st',
      notes: 'met at the fair',
      deal_value: 1200.5,
      tags: ['VIP', 'hanoi', 'saigon'],
      thread_types: ['user', 'group'],
      last_activity: '2024-06-01T10:00:00+00:00',
    });
  });

  it('changes nothing when the source has nothing the target lacks', () => {
    expect(mergedFields(source, { ...target, tags: ['VIP'], thread_types: [] })).toEqual({});
  });

  it('keeps at most 50 tags, the target’s first', () => {
    const many = (p: string) => Array.from({ length: 40 }, (_, i) => `${p}${i}`);
    const out = mergedFields({ ...target, tags: many('a') }, { ...source, tags: many('b') });
    expect(out.tags).toHaveLength(50);
    expect((out.tags as string[]).slice(0, 40)).toEqual(many('a'));
  });

  it('fills custom fields key by key when the column exists, the target’s non-empty values winning', () => {
    const out = mergedFields(
      { ...target, custom_fields: { size: 'M', city: '' } },
      { ...source, custom_fields: { size: 'L', city: 'Hue', pet: 'cat' } },
    );
    expect(out.custom_fields).toEqual({ size: 'M', city: 'Hue', pet: 'cat' });
    expect(mergedFields(target, { ...source, custom_fields: { size: 'L' } })).not.toHaveProperty('custom_fields');
  });
});

describe('restoredFields', () => {
  const after = mergedFields(target, source);
  const before = Object.fromEntries(Object.keys(after).map((c) => [c, (target as Record<string, unknown>)[c]]));

  it('gives back every field that still holds what the merge wrote', () => {
    const current = { ...target, ...after, last_activity: '2024-06-01T10:00:00.000Z' };
    expect(restoredFields(current, before, after)).toEqual(before);
  });

  it('leaves a field edited since the merge as it is', () => {
    const current = { ...target, ...after, phone: '+84999999999', tags: ['other'] };
    const out = restoredFields(current, before, after);
    expect(out).not.toHaveProperty('phone');
    expect(out).not.toHaveProperty('tags');
    expect(out.email).toBe('');
  });
});

it('apiFields names changed columns as the API does, without bookkeeping columns', () => {
  expect(apiFields({ chatnet_uid: 'x', deal_value: 1, last_activity: 'x', thread_types: [] })).toEqual(['chatnetUid', 'dealValue']);
});
