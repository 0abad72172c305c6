import { contactFieldOut } from './contact-fields.out';
import { mergeOut } from './contact-merges.out';
import { AT, emptyContact, fullContact, ID, OTHER_ID } from '../test-support/crm-fixtures';

describe('custom field and merge mappers', () => {
  it('contactFieldOut: the definition as the API shows it', () => {
    const f = { id: ID, key: 'plan', label: 'Plan', type: 'select', options: ['gold'], position: 1, createdAt: AT, updatedAt: AT };
    expect(contactFieldOut(f)).toEqual(f);
  });

  const moved = { notes: 1, appointments: 2, activities: 3, friends: 0, leadLinks: 0 };
  const merge = { id: ID, targetId: ID, sourceId: OTHER_ID, mergedAt: AT, undoableUntil: AT, filledFields: ['email'], moved, target: fullContact() };

  it('mergeOut: unset mergedBy, undoneAt and source are null; contacts through contactOut', () => {
    const out = mergeOut(merge);
    expect(out).toMatchObject({
      id: ID,
      targetId: ID,
      sourceId: OTHER_ID,
      mergedBy: null,
      undoneAt: null,
      source: null,
      moved,
      filledFields: ['email'],
    });
    expect(out.target).toMatchObject({ id: ID, hasChatnet: true, customFields: { plan: 'gold', seats: 3, active: true } });
  });

  it('mergeOut after an undo: the source back, with nulls for its absent values', () => {
    const out = mergeOut({ ...merge, mergedBy: OTHER_ID, undoneAt: AT, source: emptyContact() });
    expect(out).toMatchObject({ mergedBy: OTHER_ID, undoneAt: AT });
    expect(out.source).toMatchObject({ email: null, phone: null, hasChatnet: false, customFields: {} });
  });

  it('mergeOut without target is a broken answer', () => {
    expect(() => mergeOut({ ...merge, target: null })).toThrow('crm merge: target is missing from the answer');
  });
});
