import { renderFor, unfilledPlaceholders, variablesProblem } from './campaign-text';

const lan = { name: 'Lan', phone: '+84901234567', email: 'lan@example.test', status: 'customer', tags: ['vip', 'hanoi'], chatnetUid: 'uid-1' };

describe('campaign messages', () => {
  it('fill contact fields and campaign variables, with or without the contact. prefix', () => {
    expect(renderFor('Chào {{name}} ({{contact.phone}}), mã {{code}} · {{tags}}', lan, { code: 'SALE10' })).toBe(
      'Chào Lan (+84901234567), mã SALE10 · vip, hanoi',
    );
  });

  it('a variable named like a contact field is the fallback when the contact has no value', () => {
    expect(renderFor('Chào {{name}}!', { ...lan, name: '' }, { name: 'bạn' })).toBe('Chào bạn!');
    expect(renderFor('Chào {{name}}!', lan, { name: 'bạn' })).toBe('Chào Lan!');
    expect(renderFor('{{count}} {{flag}}', lan, { count: 3, flag: true })).toBe('3 true');
  });

  it('placeholders that nothing fills are reported, so a campaign cannot send "Hi ," to a thousand people', () => {
    expect(unfilledPlaceholders('Hi {{name}}, {{code}} {{shop.name}}', { code: 'x' })).toEqual(['shop.name']);
    expect(unfilledPlaceholders('Hi {{contact.email}}', {})).toEqual([]);
  });

  it('variables: an object of names to strings, numbers or booleans', () => {
    expect(variablesProblem({ code: 'x', n: 1, ok: false, 'shop.name': 'A' })).toBeUndefined();
    expect(variablesProblem(['x'])).toEqual(['variables', expect.any(String)]);
    expect(variablesProblem(null)).toEqual(['variables', expect.any(String)]);
    expect(variablesProblem({ 'bad name': 1 })).toEqual(['variables.bad name', expect.any(String)]);
    expect(variablesProblem({ code: { a: 1 } })).toEqual(['variables.code', expect.any(String)]);
    expect(variablesProblem({ code: Number.NaN })).toEqual(['variables.code', expect.any(String)]);
    expect(variablesProblem({ code: 'x'.repeat(1001) })).toEqual(['variables.code', expect.any(String)]);
  });
});
