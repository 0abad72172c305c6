import { GroupNames } from './group-names';

describe('GroupNames', () => {
  let now = 0;
  const clock = () => now;
  beforeEach(() => (now = 1_000_000));

  it('asks the network once per group while the name is fresh, again after ttlMs (a rename shows)', async () => {
    const names = ['Old name', 'New name'];
    const lookup = jest.fn(async () => names.shift());
    const g = new GroupNames({ lookup, ttlMs: 60_000, now: clock });
    expect(await Promise.all([g.name('g1'), g.name('g1')])).toEqual(['Old name', 'Old name']);
    now += 59_000;
    expect(await g.name('g1')).toBe('Old name');
    expect(lookup).toHaveBeenCalledTimes(1);
    now += 2_000;
    expect(await g.name('g1')).toBe('New name');
    expect(lookup).toHaveBeenCalledTimes(2);
  });

  it('a failure or a slow network is no name, remembered for failureTtlMs only', async () => {
    const errors: unknown[] = [];
    const lookup = jest.fn().mockRejectedValueOnce(new Error('down')).mockResolvedValue('  Shop friends  ');
    const g = new GroupNames({ lookup, failureTtlMs: 10_000, now: clock, onError: (err) => errors.push(err) });
    expect(await g.name('g1')).toBeUndefined();
    expect(await g.name('g1')).toBeUndefined();
    expect(lookup).toHaveBeenCalledTimes(1);
    now += 10_001;
    expect(await g.name('g1')).toBe('Shop friends');
    expect(errors).toHaveLength(1);

    const slow = new GroupNames({ lookup: () => new Promise(() => undefined), timeoutMs: 20, onError: (err) => errors.push(err) });
    expect(await slow.name('g2')).toBeUndefined();
    expect(String(errors[1])).toContain('longer than 20 ms');
  });

  it('keeps at most maxEntries groups, dropping the oldest', async () => {
    const lookup = jest.fn(async (id: string) => `name of ${id}`);
    const g = new GroupNames({ lookup, maxEntries: 2, now: clock });
    await g.name('a');
    await g.name('b');
    await g.name('c');
    await g.name('b');
    expect(lookup).toHaveBeenCalledTimes(3);
    expect(await g.name('a')).toBe('name of a');
    expect(lookup).toHaveBeenCalledTimes(4);
  });
});
