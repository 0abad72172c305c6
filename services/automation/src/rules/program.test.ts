import type { ActionDef } from '../rule-definitions';
import { compile, resolve } from './program';

const tag = (t: string): ActionDef => ({ type: 'add_tag', tag: t });

describe('program', () => {
  it('a rule without if steps is its actions in order', () => {
    const p = compile([tag('a'), tag('b')]);
    expect(p.map((i) => (i.kind === 'step' ? i.path : 'jump'))).toEqual(['actions.0', 'actions.1']);
  });

  it('an if goes on to then, jumps to else, and the end of then jumps past else', () => {
    const p = compile([
      { type: 'if', conditions: [], then: [tag('t1'), { type: 'if', conditions: [], then: [tag('n')], else: [] }], else: [tag('e1')] },
      tag('after'),
    ]);
    const paths = p.map((i) => (i.kind === 'step' ? i.path : `jump→${i.to}`));
    expect(paths).toEqual([
      'actions.0',
      'actions.0.then.0',
      'actions.0.then.1',
      'actions.0.then.1.then.0',
      'jump→6',
      'actions.0.else.0',
      'actions.1',
    ]);
    const outer = p[0] as Extract<(typeof p)[0], { kind: 'step' }>;
    const inner = p[2] as Extract<(typeof p)[0], { kind: 'step' }>;
    expect(outer.elseAt).toBe(5);
    // The inner if has no else: not holding goes to what follows it (the outer then's end, a jump past the else).
    expect(inner.elseAt).toBe(4);
    expect(resolve(p, 4)).toBe(6);
    expect(resolve(p, 7)).toBe(7);
  });
});
