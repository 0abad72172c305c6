import type { OrgUser } from '../clients';
import { parseMentions, previewOf } from './mentions';

const A = '3f1c2b4a-8d7e-4f60-9a1b-2c3d4e5f6a7b';
const B = '9e8d7c6b-5a49-4382-8716-05f4e3d2c1b0';

describe('note mentions', () => {
  it('finds @[user:<id>] and @email mentions in order of first appearance, each once', () => {
    const text = `@[user:${A}] please call, cc @Lan.Tran@Example.test and @[user:${B.toUpperCase()}]; again @[user:${A}] @lan.tran@example.test.`;
    expect(parseMentions(text)).toEqual([
      { kind: 'id', value: A },
      { kind: 'email', value: 'lan.tran@example.test' },
      { kind: 'id', value: B },
    ]);
  });

  it('ignores plain addresses, malformed ids and a sentence-ending period', () => {
    expect(parseMentions('write to lan@example.test or @[user:42] or @[user:] or @nobody')).toEqual([]);
    expect(parseMentions('ask @mai@shop.vn.')).toEqual([{ kind: 'email', value: 'mai@shop.vn' }]);
  });

  it('previews with names for resolved ids, whitespace folded, cut at the limit', () => {
    const users = new Map<string, OrgUser>([[A, { id: A, email: 'a@x.test', fullName: 'Mai Tran', status: 'active' }]]);
    expect(previewOf(`@[user:${A}]\n\n see   @[user:${B}]`, users)).toBe(`@Mai Tran see @[user:${B}]`);
    expect(previewOf('x'.repeat(300), users, 10)).toBe(`${'x'.repeat(9)}…`);
  });
});
