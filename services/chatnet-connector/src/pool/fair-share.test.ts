import { fairShare } from './fair-share';

describe('fairShare', () => {
  it('splits evenly, the remainder to the first instances in id order, and the shares add up to the total', () => {
    const ids = ['c', 'a', 'b'];
    expect(ids.map((id) => fairShare(30, ids, id))).toEqual([10, 10, 10]);
    expect(ids.map((id) => fairShare(31, ids, id))).toEqual([10, 11, 10]);
    expect(ids.map((id) => fairShare(32, ids, id))).toEqual([10, 11, 11]);
    for (const total of [0, 1, 2, 7, 100]) expect(ids.reduce((n, id) => n + fairShare(total, ids, id), 0)).toBe(total);
  });

  it('counts an instance missing from the registry (not yet seen) among the instances', () => {
    expect(fairShare(30, ['a', 'b'], 'c')).toBe(10);
    expect(fairShare(30, [], 'a')).toBe(30);
  });
});
