import { infra } from '@crm/testing';
import { createPool, Pool } from './index';
import { afterSql, isKeysetPosition, keysetPage, keyTimeSql, readKeyset } from './keyset';

const ID = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const fail = (field: string, message: string) => Object.assign(new Error(message), { field });

describe('keyset positions', () => {
  it('accepts microsecond UTC timestamps and UUIDs; "" only where the column may be NULL', () => {
    expect(isKeysetPosition({ value: '2024-05-01T10:00:00.123456Z', id: ID(1) })).toBe(true);
    expect(isKeysetPosition({ value: '2024-05-01T10:00:00Z', id: ID(1) })).toBe(true);
    expect(isKeysetPosition({ value: '', id: ID(1) })).toBe(false);
    expect(isKeysetPosition({ value: '', id: ID(1) }, true)).toBe(true);
    for (const value of [
      '2024-02-30T00:00:00Z',
      '2024-13-01T00:00:00Z',
      '0000-01-01T00:00:00Z',
      '2024-05-01 10:00:00',
      "x' OR 1=1--",
      '2024-05-01T10:00:00.1234567Z',
    ]) {
      expect([value, isKeysetPosition({ value, id: ID(1) })]).toEqual([value, false]);
    }
    expect(isKeysetPosition({ value: '2024-05-01T10:00:00Z', id: 'not-a-uuid' })).toBe(false);
  });

  it('readKeyset names cursor or updatedSince when they are malformed', () => {
    expect(readKeyset({}, fail)).toEqual({ order: 'default', after: undefined, updatedSince: undefined });
    expect(readKeyset({ order: 'updated', updatedSince: '2024-01-01T00:00:00.000Z' }, fail).updatedSince).toEqual(
      new Date('2024-01-01T00:00:00.000Z'),
    );
    expect(() => readKeyset({ after: { value: 'nope', id: ID(1) } }, fail)).toThrow(expect.objectContaining({ field: 'cursor' }));
    expect(() => readKeyset({ order: 'updated', after: { value: '', id: ID(1) } }, fail, true)).toThrow(expect.objectContaining({ field: 'cursor' }));
    expect(() => readKeyset({ updatedSince: 'soon' }, fail)).toThrow(expect.objectContaining({ field: 'updatedSince' }));
  });

  it('keysetPage gives a next position only when a row lies beyond the page', () => {
    const rows = [1, 2, 3].map((n) => ({ id: ID(n), key_value: n === 2 ? null : `2024-01-0${n}T00:00:00.000000Z` }));
    expect(keysetPage(rows, 3)).toEqual({ rows });
    expect(keysetPage(rows, 2)).toEqual({ rows: rows.slice(0, 2), next: { value: '', id: ID(2) } });
  });
});

// The SQL against PostgreSQL itself (a SELECT over VALUES: nothing is created), in both directions and with NULLs.
describe('afterSql pages without overlap or gap', () => {
  let pool: Pool;
  beforeAll(() => {
    pool = createPool(infra.databaseUrl, 1);
  });
  afterAll(() => pool.end());

  // Three rows share one microsecond (ties broken by id), two share a millisecond only, two have no time.
  const ROWS = [
    [ID(1), '2024-01-01 00:00:00.000100+00'],
    [ID(2), '2024-01-01 00:00:00.000100+00'],
    [ID(3), '2024-01-01 00:00:00.000100+00'],
    [ID(4), '2024-01-01 00:00:00.000200+00'],
    [ID(5), '2024-01-01 00:00:00.000900+00'],
    [ID(6), null],
    [ID(7), null],
  ];

  async function walk(dir: 'ASC' | 'DESC', limit: number): Promise<string[]> {
    const seen: string[] = [];
    let after: { value: string; id: string } | undefined;
    for (let guard = 0; guard < 20; guard++) {
      const args: unknown[] = [JSON.stringify(ROWS)];
      const arg = (v: unknown) => {
        args.push(v);
        return `$${args.length}`;
      };
      const where = after ? afterSql('t', 'id', dir, after, arg, true) : 'true';
      const { rows } = await pool.query<{ id: string; key_value: string | null }>(
        `WITH r AS (SELECT (e->>0)::uuid AS id, (e->>1)::timestamptz AS t FROM json_array_elements($1::json) e)
         SELECT id::text, ${keyTimeSql('t')} AS key_value FROM r WHERE ${where}
         ORDER BY t ${dir} NULLS LAST, id ${dir} LIMIT ${limit + 1}`,
        args,
      );
      const page = keysetPage(rows, limit);
      seen.push(...page.rows.map((r) => r.id));
      if (!page.next) return seen;
      after = page.next;
    }
    throw new Error('no last page');
  }

  it.each([1, 2, 3])('ascending, %i a page', async (limit) => {
    expect(await walk('ASC', limit)).toEqual([1, 2, 3, 4, 5, 6, 7].map(ID));
  });
  it.each([1, 2, 3])('descending (NULLs last), %i a page', async (limit) => {
    expect(await walk('DESC', limit)).toEqual([5, 4, 3, 2, 1, 7, 6].map(ID));
  });
});
