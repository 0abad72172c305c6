import { criteriaSql, validateCriteria } from './list-criteria';

describe('customer-list criteria', () => {
  it('compile to SQL whose text holds no value: every value is a parameter', () => {
    const evil = "x'); DROP TABLE contacts; --";
    const c = validateCriteria(
      {
        filters: [
          { field: 'name', operator: 'contains', value: evil },
          { field: 'tags', operator: 'in', value: [evil, 'vip'] },
          { field: 'leadScore', operator: 'gte', value: '10' },
          { field: 'createdAt', operator: 'lte', value: '2024-05-31' },
        ],
      },
      'VN',
    );
    const params: unknown[] = ['org'];
    const sql = criteriaSql(c, params);
    expect(sql).not.toContain('DROP');
    expect(sql).not.toContain('vip');
    expect(params).toEqual(['org', "%x'); drop table contacts; --%", evil.toLowerCase(), 'vip', 10, '2024-06-01T00:00:00.000Z']);
    expect(sql).toContain('c.created_at < $6::timestamptz'); // a date covers its whole day
  });

  it('no criteria or no filters match every contact', () => {
    expect(criteriaSql(validateCriteria(undefined, 'VN'), [])).toBe('true');
    expect(criteriaSql(validateCriteria({ filters: [] }, 'VN'), [])).toBe('true');
  });

  it('reject fields outside the whitelist, even inherited object keys', () => {
    for (const field of ['constructor', '__proto__', 'toString', 'org_id', 'c.name']) {
      expect(() => validateCriteria({ filters: [{ field, operator: 'equals', value: 'x' }] }, 'VN')).toThrow(/must be one of/);
    }
  });
});
