import { AppError } from '@crm/grpc-kit';
import { applyChanges, changesFromJson, type FieldDef, filterFromText, valueFromJson, valueFromText, valueToText } from './values';

const defs = new Map<string, FieldDef>([
  ['n', { key: 'n', type: 'number', options: [] }],
  ['d', { key: 'd', type: 'date', options: [] }],
  ['b', { key: 'b', type: 'boolean', options: [] }],
  ['s', { key: 's', type: 'select', options: ['Gold', 'Silver'] }],
  ['t', { key: 't', type: 'text', options: [] }],
]);
const def = (k: string) => defs.get(k)!;
const fieldOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return (err as AppError).details?.[0]?.field;
  }
  return undefined;
};

describe('custom field values', () => {
  it('JSON values are typed: a number is a finite number, a date a real YYYY-MM-DD, a select one of its options', () => {
    expect(valueFromJson(def('n'), -2.5, 'f')).toBe(-2.5);
    expect(fieldOf(() => valueFromJson(def('n'), '2', 'f'))).toBe('f');
    expect(fieldOf(() => valueFromJson(def('n'), Number.POSITIVE_INFINITY, 'f'))).toBe('f');
    expect(valueFromJson(def('d'), '2024-02-29', 'f')).toBe('2024-02-29');
    expect(fieldOf(() => valueFromJson(def('d'), '2023-02-29', 'f'))).toBe('f');
    expect(fieldOf(() => valueFromJson(def('d'), '2024-02-29T00:00:00Z', 'f'))).toBe('f');
    expect(fieldOf(() => valueFromJson(def('b'), 'true', 'f'))).toBe('f');
    expect(valueFromJson(def('s'), 'silver', 'f')).toBe('Silver');
    expect(fieldOf(() => valueFromJson(def('t'), 'x'.repeat(1001), 'f'))).toBe('f');
  });

  it('text values (CSV cells, filters) are read by type and written back to the same value', () => {
    for (const [k, text, value] of [
      ['n', '1e3', 1000],
      ['n', '-0.5', -0.5],
      ['b', 'YES', true],
      ['b', '0', false],
      ['d', '1999-12-31', '1999-12-31'],
      ['s', 'GOLD', 'Gold'],
      ['t', 'free text', 'free text'],
    ] as const) {
      expect(valueFromText(def(k), text, k)).toBe(value);
      expect(valueFromText(def(k), valueToText(value), k)).toBe(value);
    }
    for (const [k, text] of [
      ['n', '12abc'],
      ['n', '0x10'],
      ['n', 'Infinity'],
      ['b', 'maybe'],
      ['d', '31/12/1999'],
      ['s', 'Bronze'],
    ] as const) {
      expect(fieldOf(() => valueFromText(def(k), text, k))).toBe(k);
    }
  });

  it('the API object names customFields.<key>; null or "" removes a key; keys come out in jsonb order', () => {
    expect(fieldOf(() => changesFromJson({ nope: 1 }, defs))).toBe('customFields.nope');
    expect(fieldOf(() => changesFromJson({ n: 'x' }, defs))).toBe('customFields.n');
    expect(fieldOf(() => changesFromJson([1], defs))).toBe('customFields');
    const changes = changesFromJson({ t: 'hi', s: null, n: '' }, defs);
    expect(changes).toEqual({ set: { t: 'hi' }, remove: ['s', 'n'] });
    const next = applyChanges({ s: 'Gold', n: 1, long_key: true } as never, changes);
    expect(JSON.stringify(next)).toBe('{"t":"hi","long_key":true}');
  });

  it('filters name cf.<key> and need a value', () => {
    expect(filterFromText({ n: '10.0', b: 'true' }, defs)).toEqual({ n: 10, b: true });
    expect(fieldOf(() => filterFromText({ x: '1' }, defs))).toBe('cf.x');
    expect(fieldOf(() => filterFromText({ s: ' ' }, defs))).toBe('cf.s');
    expect(filterFromText({}, defs)).toBeUndefined();
  });
});
