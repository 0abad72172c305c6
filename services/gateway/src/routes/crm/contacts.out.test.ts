import { contactOut, customFieldsOf, detailOut, friendOut, memberOut, publicContactOut } from './contacts.out';
import { AT, emptyContact, fullContact, ID, OTHER_ID } from '../../test-support/crm-fixtures';

describe('contact mappers', () => {
  it('contactOut: absent values are null (never ""), hasChatnet false, customFields {}', () => {
    expect(contactOut(emptyContact())).toEqual({
      id: ID,
      name: 'Ann',
      email: null,
      phone: null,
      source: 'manual',
      status: 'new',
      statusId: null,
      assignedUserId: null,
      avatar: null,
      leadScore: 0,
      dealValue: 0,
      hasChatnet: false,
      chatnetUid: null,
      threadTypes: [],
      friends: [],
      notes: null,
      tags: [],
      customFields: {},
      lastActivity: AT,
      createdAt: AT,
      updatedAt: AT,
    });
  });

  it('contactOut: set values pass through, ids and dates as given, custom fields typed', () => {
    const out = contactOut(fullContact());
    expect(out).toMatchObject({
      email: 'ann@example.com',
      phone: '+84912345678',
      statusId: OTHER_ID,
      assignedUserId: OTHER_ID,
      hasChatnet: true,
      chatnetUid: 'uid-1',
      dealValue: 12.5,
      notes: 'likes mornings',
      customFields: { plan: 'gold', seats: 3, active: true },
    });
    expect(out.friends).toEqual([{ chatnetUid: 'uid-1', displayName: 'Ann', accountId: OTHER_ID }]);
  });

  it('customFieldsOf: {} for none, the object otherwise', () => {
    expect(customFieldsOf({})).toEqual({});
    expect(customFieldsOf({ customFieldsJson: '{"a":1}' })).toEqual({ a: 1 });
  });

  it('memberOut is contactOut without friends', () => {
    const { friends: _friends, ...rest } = contactOut(fullContact());
    expect(memberOut(fullContact())).toEqual(rest);
  });

  it('detailOut: notes become records (author null when none), the contact’s text moves to notesText', () => {
    const out = detailOut({
      contact: fullContact(),
      conversations: [{ id: ID, chatnetAccountId: OTHER_ID, messageCount: 2 }],
      conversationsAvailable: true,
      notes: [{ id: ID, contactId: OTHER_ID, content: 'hi', createdBy: '', createdAt: AT }],
      appointments: [{ id: ID, title: 'Call', scheduledAt: AT, status: 'scheduled', type: 'call', notes: '', createdAt: AT, updatedAt: AT }],
      activities: [],
    } as unknown as Parameters<typeof detailOut>[0]);
    expect(out.notesText).toBe('likes mornings');
    expect(out.notes).toEqual([{ id: ID, contactId: OTHER_ID, content: 'hi', createdBy: null, createdAt: AT }]);
    expect(out.conversations).toEqual([{ id: ID, chatnetAccountId: OTHER_ID, messageCount: 2, lastMessageAt: null }]);
    expect(out.appointments).toEqual([{ id: ID, title: 'Call', scheduledAt: AT, status: 'scheduled' }]);
  });

  it('detailOut without a contact is a broken answer, not a TypeError', () => {
    expect(() => detailOut({ contact: null, conversations: [], conversationsAvailable: false, notes: [], appointments: [], activities: [] })).toThrow(
      'crm GetContact: contact is missing from the answer',
    );
  });

  it('publicContactOut: the spec’s names (fullName), nothing internal, absent values null', () => {
    expect(publicContactOut(emptyContact())).toEqual({
      id: ID,
      fullName: 'Ann',
      phone: null,
      email: null,
      source: 'manual',
      status: 'new',
      notes: null,
      tags: [],
      customFields: {},
      createdAt: AT,
      updatedAt: AT,
    });
    expect(publicContactOut(fullContact())).toMatchObject({
      phone: '+84912345678',
      email: 'ann@example.com',
      customFields: { plan: 'gold', seats: 3, active: true },
    });
  });
});

describe('friendOut', () => {
  const record = { id: ID, chatnetUid: 'u-1', displayName: 'Ann', accountId: OTHER_ID, relationshipKind: 'friend', addedAt: AT };
  it('lists the record’s fields', () => {
    expect(friendOut(record)).toEqual(record);
  });
  it('a name the network did not give is null, not ""', () => {
    expect(friendOut({ ...record, displayName: '' }).displayName).toBeNull();
  });
});
