import { statusOut } from './contact-statuses.out';
import { customerListBriefOut, customerListCreatedOut, customerListOut } from './customer-lists.out';
import { noteOut } from './notes.out';
import { AT, ID, OTHER_ID } from '../../test-support/crm-fixtures';

describe('status, customer list and note mappers', () => {
  it('statusOut: no color is null, a color passes through', () => {
    const st = { id: ID, name: 'Hot', color: '', position: 2, contactCount: 5, createdAt: AT, updatedAt: AT };
    expect(statusOut(st)).toEqual({ ...st, color: null });
    expect(statusOut({ ...st, color: '#22c55e' }).color).toBe('#22c55e');
  });

  it('customerListOut: description null when empty, criteria parsed ({filters: []} when none)', () => {
    const l = { id: ID, name: 'VIPs', description: '', status: 'draft', contactCount: 0, criteriaJson: '', createdAt: AT, updatedAt: AT };
    expect(customerListOut(l)).toEqual({
      id: ID,
      name: 'VIPs',
      description: null,
      status: 'draft',
      contactCount: 0,
      criteria: { filters: [] },
      createdAt: AT,
      updatedAt: AT,
    });
    const criteria = { filters: [{ field: 'tags', operator: 'contains', value: 'vip' }] };
    expect(customerListOut({ ...l, description: 'best', criteriaJson: JSON.stringify(criteria) })).toMatchObject({ description: 'best', criteria });
    expect(customerListBriefOut(l)).toEqual({ id: ID, name: 'VIPs', description: null, contactCount: 0, status: 'draft', createdAt: AT });
    expect(customerListCreatedOut(l)).toEqual({ id: ID, name: 'VIPs', status: 'draft', createdAt: AT });
  });

  it('noteOut: the author is null when crm has none', () => {
    const n = { id: ID, contactId: OTHER_ID, content: 'hi', createdBy: OTHER_ID, createdAt: AT };
    expect(noteOut(n)).toEqual(n);
    expect(noteOut({ ...n, createdBy: '' }).createdBy).toBeNull();
  });
});
